"""Stock {symbol, price, volume} records of the message-queue section,
the same in Python and Ruby (stock.rb): a 64-bit LCG drives every choice and
prices move in whole cents, so both languages build equal values and every
codec's bytes can be compared across them."""

from __future__ import annotations

TICKERS = ["AAPL", "MSFT", "GOOG", "AMZN", "NVDA", "META", "TSLA", "AVGO", "ORCL", "ADBE", "CSCO", "INTC",
           "QCOM", "AMAT", "INTU", "ISRG", "BKNG", "ADSK", "MSCI", "PYPL", "SBUX", "TMUS", "GILD", "VRTX",
           "REGN", "MDLZ", "PANW", "SNPS", "CDNS", "KLAC", "LRCX", "MRVL"]

# The keys of the write-up: named, and the integer-like strings its int-keyed
# MessagePack maps use.
KEYS = {"named": ("symbol", "price", "volume"), "int": ("0", "1", "2")}

_MASK = (1 << 64) - 1


def records(n: int, keys: str = "named", seed: int = 42) -> list[dict]:
    k_symbol, k_price, k_volume = KEYS[keys]
    state = seed
    cents = 15000
    out = []
    for _ in range(n):
        state = (state * 6364136223846793005 + 1442695040888963407) & _MASK
        r = state >> 33
        cents += r % 201 - 100
        if cents < 100:
            cents = 15000
        out.append({k_symbol: TICKERS[(r >> 8) % len(TICKERS)], k_price: cents / 100,
                    k_volume: 100_000 + (r >> 12) % 4_900_000})
    return out


def dictionary_parts() -> tuple[list[str], list[list[str]]]:
    """The pre-shared dictionary's strings and shapes: the tickers and both key sets."""
    return list(TICKERS), [list(KEYS["named"]), list(KEYS["int"])]
