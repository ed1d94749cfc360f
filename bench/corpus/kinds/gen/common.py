"""Helpers every document generator shares.

Reproducibility is the rule here: the committed files must come out byte for
byte on any machine with Python 3.8+. So values are built only from
random.Random's integer and random() streams (stable across versions and
platforms) and from + - * / and sqrt, which IEEE 754 rounds the same way
everywhere. The libm functions (sin, cos, exp, log, pow) and random.gauss,
which uses them, may differ in the last bit between C libraries, so the
trigonometry below is a polynomial on a reduced range instead.
"""

from __future__ import annotations

import datetime
import random
import zlib

SEED = 20261123

TWO_PI = 6.283185307179586
HALF_PI = 1.5707963267948966
PI = 3.141592653589793


def rng_for(name: str) -> random.Random:
    """One generator per document, so that changing one leaves the others alone."""
    return random.Random(SEED * 1_000_003 + zlib.crc32(name.encode()))


def sin(x: float) -> float:
    """sin(x) to about 1e-15, from arithmetic only (see the module note)."""
    x = x % TWO_PI  # float modulo is exact (fmod)
    sign = 1.0
    if x > PI:
        x -= PI
        sign = -1.0
    if x > HALF_PI:
        x = PI - x
    x2 = x * x
    # Taylor series to x^23: the error on [0, pi/2] is below 1e-16
    term = x
    total = x
    for k in range(1, 12):
        term = -term * x2 / ((2 * k) * (2 * k + 1))
        total += term
    return sign * total


def cos(x: float) -> float:
    return sin(x + HALF_PI)


def normalish(rng: random.Random) -> float:
    """Roughly standard normal (Irwin-Hall of 6 uniforms, rescaled)."""
    return (sum(rng.random() for _ in range(6)) - 3.0) * 1.4142135623730951


def skewed(rng: random.Random, lo: float, hi: float, power: int = 3) -> float:
    """A value in [lo, hi) that is mostly small: lo + (hi - lo) * u**power."""
    u = rng.random()
    p = 1.0
    for _ in range(power):
        p *= u
    return lo + (hi - lo) * p


def skewed_int(rng: random.Random, lo: int, hi: int, power: int = 3) -> int:
    return int(skewed(rng, lo, hi + 1, power))


def weighted(rng: random.Random, pairs):
    """pairs: [(item, weight), ...] with integer weights."""
    total = sum(w for _, w in pairs)
    r = rng.randrange(total)
    for item, w in pairs:
        if r < w:
            return item
        r -= w
    raise AssertionError("unreachable")


def pick_some(rng: random.Random, items, k: int):
    """k distinct items in random order (without random.sample, whose algorithm varies)."""
    pool = list(items)
    out = []
    for _ in range(min(k, len(pool))):
        out.append(pool.pop(rng.randrange(len(pool))))
    return out


def hex_id(rng: random.Random, digits: int) -> str:
    return format(rng.getrandbits(digits * 4), f"0{digits}x")


def uuid4(rng: random.Random) -> str:
    n = rng.getrandbits(128)
    n &= ~(0xF000 << 64)
    n |= 0x4000 << 64  # version 4
    n &= ~(0xC000 << 48)
    n |= 0x8000 << 48  # RFC 4122 variant
    h = format(n, "032x")
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def token(rng: random.Random, n: int, alphabet: str = B62) -> str:
    return "".join(alphabet[rng.randrange(len(alphabet))] for _ in range(n))


# --------------------------------------------------------------------------
# Calendar (proleptic Gregorian, UTC): naive datetimes only, never the time
# module or datetime's local-time paths, so no time zone database is involved.
# --------------------------------------------------------------------------

_EPOCH = datetime.datetime(1970, 1, 1)


def parts(unix_s: int):
    """Unix seconds -> (Y, M, D, h, m, s): naive datetime arithmetic, which is
    exact integer calendar arithmetic."""
    t = _EPOCH + datetime.timedelta(seconds=unix_s)
    return t.year, t.month, t.day, t.hour, t.minute, t.second


def iso(unix_s: int, frac: str = "", offset_min: int | None = 0, sep: str = "T") -> str:
    """ISO 8601 text of an instant: offset_min None writes no offset (local
    time), 0 writes Z, otherwise the wall time at that offset and +hh:mm."""
    shift = (offset_min or 0) * 60
    y, mo, d, h, mi, s = parts(unix_s + shift)
    text = f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{s:02d}{frac}"
    if offset_min is None:
        return text
    if offset_min == 0:
        return text + "Z"
    sign = "+" if offset_min > 0 else "-"
    a = abs(offset_min)
    return f"{text}{sign}{a // 60:02d}:{a % 60:02d}"


def date_only(unix_s: int) -> str:
    y, mo, d, *_ = parts(unix_s)
    return f"{y:04d}-{mo:02d}-{d:02d}"


# 2024-03-01T00:00:00Z, the reference instant of the corpus
T0 = 1709251200

# --------------------------------------------------------------------------
# Vocabularies
# --------------------------------------------------------------------------

FIRST_NAMES = """James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara
Richard Susan Joseph Jessica Thomas Sarah Charles Karen Daniel Lisa Matthew Nancy Anthony Betty Mark
Margaret Donald Sandra Steven Ashley Paul Kimberly Andrew Emily Joshua Donna Kenneth Michelle Kevin Carol
Brian Amanda George Dorothy Timothy Melissa Ronald Deborah Jason Stephanie Edward Rebecca Jeffrey Sharon
Ryan Laura Jacob Cynthia Gary Kathleen Nicholas Amy Eric Angela Jonathan Shirley Stephen Anna Larry Brenda
Justin Pamela Scott Emma Brandon Nicole Benjamin Helen Samuel Samantha Gregory Katherine Alexander Christine
Frank Debra Patrick Rachel Raymond Carolyn Jack Janet Dennis Catherine Jerry Maria Tyler Heather Aaron Diane
Priya Wei Mohammed Yuki Olga Carlos Fatima Hiroshi Ana Lars Ingrid Mateo Chloe Noah Aisha Diego Sofia Arjun""".split()

LAST_NAMES = """Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez
Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark
Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson
Baker Hall Rivera Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards
Collins Reyes Stewart Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed
Kelly Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes
Patel Chen Wang Tanaka Ivanova Silva Kowalski Nakamura Okafor Haddad Jensen Novak Schmidt Rossi Dubois""".split()

WORDS = """time year people way day man thing woman life child world school state family student group
country problem hand part place case week company system program question work government number night
point home water room mother area money story fact month lot right study book eye job word business issue
side kind head house service friend father power hour game line end member law car city community name
president team minute idea kid body information back parent face others level office door health person
art war history party result change morning reason research girl guy moment air teacher force education
foot boy age policy process music market sense nation plan college interest death experience effect use
class control care field development role effort rate heart drug show leader light voice wife police mind
price report decision son view relationship town road arm difference value building action model season
society tax director position player record paper space ground form event official matter center couple
site project activity star table need court oil situation cost industry figure street image phone data
picture practice piece land product doctor wall patient worker news test movie north love support
technology step baby computer type attention film tree source organization hair window evidence""".split()

ADJECTIVES = """new good high old great big small large local social important national young different
black long little political white real public sure best low early able human free clear full hard special
major strong whole easy economic simple dark recent late final private past current open ready central
quiet bright soft warm fresh heavy light quick slow smooth sharp solid thin thick wide narrow clean rare
durable compact portable wireless ergonomic stainless organic premium classic modern vintage rustic sleek""".split()

PRODUCT_NOUNS = """backpack blender headphones kettle lamp monitor keyboard mouse chair desk jacket sneakers
watch camera tripod speaker charger cable router drone tent sleeping-bag thermos bottle mug pan skillet
knife grinder scale vacuum fan heater humidifier purifier toaster grill cooler umbrella wallet belt
scarf gloves helmet bicycle scooter skateboard notebook pen planner stapler printer tablet case stand
""".split()

BRANDS = """Acme Northwind Contoso Globex Initech Umbrella Hooli Vandelay Wayne Stark Tyrell Soylent Cyberdyne
Massive Aperture Oscorp Wonka Gringotts Dunder Pied Piper Monarch Nakatomi Zorg Virtucon Krusty Sirius
""".split()

COLORS = "black white gray silver red blue navy green olive teal orange yellow pink purple beige brown".split()

CITIES = [
    ("New York", "NY", "US"), ("Los Angeles", "CA", "US"), ("Chicago", "IL", "US"), ("Houston", "TX", "US"),
    ("Phoenix", "AZ", "US"), ("Seattle", "WA", "US"), ("Denver", "CO", "US"), ("Boston", "MA", "US"),
    ("Toronto", "ON", "CA"), ("Vancouver", "BC", "CA"), ("London", "ENG", "GB"), ("Manchester", "ENG", "GB"),
    ("Berlin", "BE", "DE"), ("Munich", "BY", "DE"), ("Paris", "IDF", "FR"), ("Lyon", "ARA", "FR"),
    ("Madrid", "MD", "ES"), ("Barcelona", "CT", "ES"), ("Amsterdam", "NH", "NL"), ("Stockholm", "AB", "SE"),
    ("Tokyo", "13", "JP"), ("Osaka", "27", "JP"), ("Seoul", "11", "KR"), ("Singapore", "01", "SG"),
    ("Sydney", "NSW", "AU"), ("Melbourne", "VIC", "AU"), ("São Paulo", "SP", "BR"), ("Mexico City", "CMX", "MX"),
    ("Mumbai", "MH", "IN"), ("Bengaluru", "KA", "IN"), ("Cairo", "C", "EG"), ("Lagos", "LA", "NG"),
]

USER_AGENTS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.6261.105 Mobile Safari/537.36",
    "curl/8.5.0",
    "python-requests/2.31.0",
    "okhttp/4.12.0",
]


def person(rng: random.Random):
    first = rng.choice(FIRST_NAMES)
    last = rng.choice(LAST_NAMES)
    return first, last


def email(rng: random.Random, first: str, last: str) -> str:
    domain = rng.choice(["gmail.com", "outlook.com", "yahoo.com", "proton.me", "icloud.com", "example.org", "fastmail.com"])
    style = rng.randrange(4)
    if style == 0:
        local = f"{first}.{last}"
    elif style == 1:
        local = f"{first[0]}{last}{rng.randrange(1, 99)}"
    elif style == 2:
        local = f"{first}_{last[:3]}{rng.randrange(1970, 2005)}"
    else:
        local = f"{last}.{first[0]}"
    return f"{local.lower()}@{domain}"


def sentence(rng: random.Random, lo: int = 6, hi: int = 16) -> str:
    n = rng.randint(lo, hi)
    words = [rng.choice(WORDS if rng.random() < 0.8 else ADJECTIVES) for _ in range(n)]
    s = " ".join(words)
    return s[0].upper() + s[1:] + rng.choice([".", ".", ".", "!", "?"])


def slug(words) -> str:
    return "-".join(w.lower().replace(" ", "-") for w in words)


def ipv4(rng: random.Random) -> str:
    first = rng.choice([10, 23, 31, 45, 52, 66, 81, 104, 142, 172, 185, 192, 203, 216])
    return f"{first}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
