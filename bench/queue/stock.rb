# frozen_string_literal: true

# Stock {symbol, price, volume} records of the message-queue section, the same
# in Ruby and Python (stock.py): a 64-bit LCG drives every choice and prices
# move in whole cents, so both languages build equal values and every codec's
# bytes can be compared across them.
module Stock
  TICKERS = %w[AAPL MSFT GOOG AMZN NVDA META TSLA AVGO ORCL ADBE CSCO INTC
               QCOM AMAT INTU ISRG BKNG ADSK MSCI PYPL SBUX TMUS GILD VRTX
               REGN MDLZ PANW SNPS CDNS KLAC LRCX MRVL].map(&:freeze).freeze

  # The keys of the write-up: named, and the integer-like strings its
  # int-keyed MessagePack maps use.
  KEYS = { "named" => %w[symbol price volume].map(&:freeze).freeze, "int" => %w[0 1 2].map(&:freeze).freeze }.freeze

  MASK = (1 << 64) - 1

  module_function

  def records(n, keys = "named", seed = 42)
    k_symbol, k_price, k_volume = KEYS.fetch(keys)
    state = seed
    cents = 15_000
    Array.new(n) do
      state = (state * 6_364_136_223_846_793_005 + 1_442_695_040_888_963_407) & MASK
      r = state >> 33
      cents += r % 201 - 100
      cents = 15_000 if cents < 100
      { k_symbol => TICKERS[(r >> 8) % TICKERS.size], k_price => cents / 100.0, k_volume => 100_000 + (r >> 12) % 4_900_000 }
    end
  end

  # The pre-shared dictionary's strings and shapes: the tickers and both key sets.
  def dictionary_parts = [TICKERS, [KEYS["named"], KEYS["int"]]]
end
