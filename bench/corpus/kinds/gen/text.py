"""Documents whose weight is in their strings: unique long text, CSV rows,
hashes and identifiers, timestamps and look-alikes, non-Latin scripts."""

from __future__ import annotations

import hashlib
import unicodedata

from .common import (
    ADJECTIVES, B64, BRANDS, CITIES, COLORS, FIRST_NAMES, LAST_NAMES, PRODUCT_NOUNS, T0, date_only, email, hex_id,
    iso, person, pick_some, rng_for, sentence, skewed_int, slug, token, uuid4, weighted,
)

# --------------------------------------------------------------------------
# Reviews: rows of unique long strings
# --------------------------------------------------------------------------

OPENERS = [
    "I bought this {p} for my {who} and", "Ordered the {c} {p} after reading a lot of reviews and",
    "We have been using this {p} every day for {n} {unit} and", "Picked up the {p} on sale for ${price} and",
    "Replaced a {b} {p} with this one and", "Got this as a gift from my {who} and",
    "Honestly skeptical at first, but",
]
VERDICTS = [
    "it works exactly as described", "it has held up better than expected", "I am mostly happy with it",
    "it stopped working after {n} {unit}", "it was not what the photos suggested", "it is worth every cent",
    "the quality feels cheaper than the price", "it does the job without any fuss",
]
DETAILS = [
    "The {f} is {a}, but the {f2} could be {cmp}.", "Setup took about {m} minutes and the instructions were {a2}.",
    "The {c} finish scratches easily if you are not careful.", "Battery life is around {h} hours with normal use.",
    "Customer service replaced the {f} within {d} days when it cracked.", "It is {a} enough to take on trips.",
    "Compared to the {b} version, this one is {a} and {a3}.", "My only complaint is the {f2}, which {complaint}.",
    "Shipping took {d} days to {city}, packaging was {a2}.", "After {n} {unit} the {f} still looks new.",
]
CLOSERS = [
    "Would buy again.", "Recommended if you can get it on sale.", "Three stars because of the {f2}.",
    "Returning it.", "Five stars, no complaints.", "Buy the {b} one instead.", "Good value overall.", "",
]
FEATURES = ["handle", "lid", "strap", "zipper", "button", "display", "cord", "hinge", "base", "motor", "charging port",
            "fabric", "seal", "speaker", "app", "manual", "remote", "filter", "cushion", "frame"]
COMPLAINTS = ["rattles a bit", "feels flimsy", "gets warm", "is too short", "squeaks", "is hard to clean",
              "loses its shape", "disconnects randomly", "smells like plastic for a week"]
COMPARATIVES = ["better", "sturdier", "longer", "quieter", "lighter", "easier to reach"]
RELATIONS = ["wife", "husband", "son", "daughter", "dad", "mom", "roommate", "office", "dog", "students"]


def _fill(rng, text, product):
    return text.format(
        p=product, who=rng.choice(RELATIONS), c=rng.choice(COLORS), n=rng.randint(2, 18),
        unit=rng.choice(["days", "weeks", "months"]), price=f"{rng.randint(9, 180)}.{rng.choice(['99', '49', '00'])}",
        b=rng.choice(BRANDS), f=rng.choice(FEATURES), f2=rng.choice(FEATURES), a=rng.choice(ADJECTIVES),
        a2=rng.choice(ADJECTIVES), a3=rng.choice(ADJECTIVES), cmp=rng.choice(COMPARATIVES), m=rng.randint(3, 90),
        h=rng.randint(2, 40), d=rng.randint(2, 21), city=rng.choice(CITIES)[0], complaint=rng.choice(COMPLAINTS),
    )


def reviews():
    """Product reviews: every URL, title and body is different (the case a
    string table cannot help with, and prefix sharing only a little)."""
    rng = rng_for("reviews")
    rows = []
    seen = set()
    while len(rows) < 2600:
        brand = rng.choice(BRANDS)
        noun = rng.choice(PRODUCT_NOUNS).replace("-", " ")
        adj = rng.choice(ADJECTIVES)
        product = f"{adj} {noun}"
        asin = "B0" + token(rng, 8, "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ")
        title_words = [brand, adj.title(), noun.title(), rng.choice(["Pro", "Max", "Lite", "2-Pack", "XL", "Mini", "Plus"]),
                       f"{rng.randint(2, 64)}{rng.choice(['oz', 'L', 'in', 'W', 'GB', 'pcs'])}", rng.choice(COLORS).title()]
        title = " ".join(title_words)
        if title in seen:
            continue
        seen.add(title)
        body = " ".join(x for x in [
            _fill(rng, rng.choice(OPENERS), product) + " " + _fill(rng, rng.choice(VERDICTS), product) + ".",
            *(_fill(rng, rng.choice(DETAILS), product) for _ in range(rng.randint(1, 5))),
            _fill(rng, rng.choice(CLOSERS), product),
        ] if x)
        first, last = person(rng)
        rows.append({
            "review_id": "R" + token(rng, 13, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
            "product_url": f"https://www.shop.example/{slug(title_words[:4])}/dp/{asin}?ref=sr_1_{rng.randint(1, 48)}"
                           f"&qid={T0 + rng.randrange(10**7)}&keywords={noun.replace(' ', '+')}",
            "image_url": f"https://cdn.shop.example/images/I/{token(rng, 11)}._AC_SL{rng.choice([1000, 1200, 1500])}_.jpg",
            "title": title,
            "headline": _fill(rng, rng.choice(VERDICTS), product).capitalize(),
            "body": body,
            "author": f"{first} {last[0]}.",
            "stars": weighted(rng, [(5, 9), (4, 5), (3, 2), (2, 1), (1, 2)]),
            "helpful_votes": skewed_int(rng, 0, 800, 5),
            "verified_purchase": rng.random() < 0.8,
        })
    return rows


# --------------------------------------------------------------------------
# CSV-like: a header row, then rows of strings
# --------------------------------------------------------------------------


def csv_table():
    """An orders export read with a CSV reader: arrays of strings, numbers
    and dates included, the first row the header."""
    rng = rng_for("csv_table")
    header = ["order_id", "order_date", "ship_date", "customer_name", "customer_email", "segment", "city", "region",
              "country", "sku", "product_name", "category", "quantity", "unit_price", "discount", "total", "status"]
    cats = ["Furniture", "Office Supplies", "Technology", "Outdoor", "Kitchen"]
    rows = [header]
    for i in range(4200):
        t = T0 - rng.randrange(400) * 86400
        first, last = person(rng)
        city, region, country = rng.choice(CITIES)
        qty = skewed_int(rng, 1, 14, 2)
        price = rng.randint(2, 900) + rng.choice([0.99, 0.5, 0.0, 0.25])
        disc = rng.choice(["0", "0", "0.1", "0.2", "0.15"])
        total = round(qty * price * (1 - float(disc)), 2)
        rows.append([
            f"US-{2023 + (t > T0 - 60 * 86400)}-{100000 + i * 7 + rng.randrange(7)}", date_only(t),
            date_only(t + rng.randint(1, 7) * 86400) if rng.random() < 0.9 else "",
            f"{first} {last}", email(rng, first, last), rng.choice(["Consumer", "Corporate", "Home Office"]),
            city, region, country, f"{rng.choice(['FUR', 'OFF', 'TEC', 'OUT', 'KIT'])}-{rng.randrange(10000):04d}",
            f"{rng.choice(BRANDS)} {rng.choice(ADJECTIVES).title()} {rng.choice(PRODUCT_NOUNS).title()}",
            rng.choice(cats), str(qty), f"{price:.2f}", disc, f"{total:.2f}",
            rng.choice(["Shipped", "Delivered", "Delivered", "Returned", "Pending"]),
        ])
    return rows


# --------------------------------------------------------------------------
# Hashes and identifiers
# --------------------------------------------------------------------------


def git_log():
    """A commits listing as a Git hosting API returns it (40-hex SHAs, node
    ids, URLs that embed them), plus CI artifacts with sha256 digests and
    UUID request ids."""
    rng = rng_for("git_log")
    api = "https://api.github.example/repos/acme/widgets"
    web = "https://github.example/acme/widgets"
    authors = []
    for _ in range(14):
        first, last = person(rng)
        login = (first[0] + last).lower() + str(rng.randint(1, 99))
        authors.append((f"{first} {last}", email(rng, first, last), login, rng.randrange(100000, 160000000)))
    shas = [hex_id(rng, 40) for _ in range(301)]
    commits = []
    t = T0
    verbs = ["Fix", "Add", "Remove", "Refactor", "Update", "Bump", "Document", "Test", "Revert"]
    for i in range(300):
        name, mail, login, uid = rng.choice(authors)
        t -= skewed_int(rng, 60, 86400, 3)
        sha = shas[i]
        tree = hex_id(rng, 40)
        subject = f"{rng.choice(verbs)} {rng.choice(['parser', 'cache', 'retry logic', 'CI', 'docs', 'encoder', 'CLI flags', 'deps'])}" \
                  f" {rng.choice(['for empty input', 'on Windows', 'when offline', 'in release builds', '(#' + str(rng.randint(100, 4000)) + ')'])}"
        message = subject if rng.random() < 0.5 else subject + "\n\n" + sentence(rng, 10, 30) + \
            (f"\n\nSigned-off-by: {name} <{mail}>" if rng.random() < 0.4 else "")
        who = {"name": name, "email": mail, "date": iso(t)}
        commits.append({
            "sha": sha, "node_id": "C_kwDO" + token(rng, 30, B64.replace("+", "").replace("/", "")),
            "commit": {"author": who, "committer": dict(who), "message": message,
                       "tree": {"sha": tree, "url": f"{api}/git/trees/{tree}"},
                       "url": f"{api}/git/commits/{sha}", "comment_count": 0,
                       "verification": {"verified": rng.random() < 0.3, "reason": "unsigned", "signature": None, "payload": None}},
            "url": f"{api}/commits/{sha}", "html_url": f"{web}/commit/{sha}", "comments_url": f"{api}/commits/{sha}/comments",
            "author": {"login": login, "id": uid, "avatar_url": f"https://avatars.github.example/u/{uid}?v=4", "type": "User"},
            "parents": [{"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{web}/commit/{p}"}
                        for p in ([shas[i + 1]] if rng.random() < 0.9 else [shas[i + 1], hex_id(rng, 40)])],
        })
    artifacts = []
    for i in range(180):
        content = f"{i}:{rng.getrandbits(64)}".encode()
        artifacts.append({
            "id": 1200000000 + i * 17, "name": rng.choice(["wheel-linux-x86_64", "wheel-macos-arm64", "sdist", "coverage", "docs-html"]),
            "digest": "sha256:" + hashlib.sha256(content).hexdigest(),
            "size_in_bytes": skewed_int(rng, 2000, 90_000_000, 3),
            "request_id": uuid4(rng), "trace_id": hex_id(rng, 32),
            "workflow_run": {"id": 8000000000 + rng.randrange(10**8), "head_sha": rng.choice(shas),
                             "head_branch": rng.choice(["main", "release/2.4", "dependabot/npm/vite-5.1.4"])},
            "created_at": iso(T0 - rng.randrange(30 * 86400)),
            "expired": rng.random() < 0.2,
        })
    return {"commits": commits, "artifacts": artifacts}


# --------------------------------------------------------------------------
# Timestamps and strings that only look like them
# --------------------------------------------------------------------------


def timestamps():
    """Event records with timestamp strings in many ISO 8601 variants (Z,
    +02:00, fractions of 3, 6 and 9 digits, a space separator, dates
    alone) beside strings that only look like dates: invalid days
    (2023-02-29, 2024-04-31), month 13, version numbers (2024.01.02), phone
    numbers, ISO week dates, compact forms."""
    rng = rng_for("timestamps")
    out = []
    t = T0 - 86400 * 40
    offsets = [0, 0, 0, 60, 120, -300, -420, 330, 540, 345]
    for i in range(700):
        t += skewed_int(rng, 1, 7200, 3)
        ms = rng.randrange(1000)
        us = rng.randrange(10**6)
        ns = rng.randrange(10**9)
        off = rng.choice(offsets)
        rec = {
            "id": i + 1,
            "created_at": iso(t),
            "updated_at": iso(t + rng.randrange(86400), offset_min=off),
            "received_at": iso(t, frac=f".{ms:03d}"),
            "processed_at": iso(t + 1, frac=f".{us:06d}", offset_min=rng.choice(offsets)),
            "traced_at": iso(t, frac=f".{ns:09d}"),
            "logged_at": iso(t, offset_min=None, sep=" "),
            "local_time": iso(t + 7200, frac=f".{ms:03d}", offset_min=None),
            "due_date": date_only(t + rng.randint(1, 60) * 86400),
        }
        kind = i % 10
        if kind == 0:
            rec["expires"] = rng.choice(["2023-02-29", "2024-04-31", "2024-06-31", "2025-02-29", "2024-11-31"])
        elif kind == 1:
            rec["period"] = rng.choice(["2024-13-01", "2024-00-10", "2024-12-32", "2024-1-5"])
        elif kind == 2:
            rec["app_version"] = rng.choice(["2024.01.02", "2024.3.1", "23.10.1", "2024.02.29-beta"])
        elif kind == 3:
            rec["phone"] = rng.choice(["2024-555-0199", "+1-202-555-0143", "+44 20 7946 0958", "030-1234-5678"])
        elif kind == 4:
            rec["week"] = f"2024-W{rng.randint(1, 52):02d}"
        elif kind == 5:
            rec["build"] = iso(t).replace("-", "").replace(":", "")  # 20240305T142231Z, ISO 8601 basic
        elif kind == 6:
            rec["leap_day"] = rng.choice(["2024-02-29", "2000-02-29", "1900-02-29"])
        elif kind == 7:
            rec["rfc2822"] = "Tue, 05 Mar 2024 14:22:31 +0000"
        elif kind == 8:
            rec["time_of_day"] = f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"
        else:
            rec["order_ref"] = f"{date_only(t)}-{rng.randrange(100000):05d}"
        rec["status"] = rng.choice(["ok", "retry", "failed"])
        out.append(rec)
    return out


# --------------------------------------------------------------------------
# Unicode
# --------------------------------------------------------------------------

PHRASES = {
    "ja": ["今日はいい天気ですね", "明日の会議は10時からです", "了解しました、ありがとうございます", "駅前の新しいカフェに行ってみた",
           "写真を送ります", "少し遅れます、すみません", "週末は京都に行く予定です", "資料の最新版はこちらです"],
    "zh": ["我们明天下午三点开会", "这个价格有点贵", "谢谢你的帮助", "我已经把文件发给你了", "周末一起去爬山吧", "北京今天下雨了",
           "请确认一下订单号"],
    "ko": ["안녕하세요, 반갑습니다", "오늘 저녁에 시간 있어요?", "회의 자료를 공유해 주세요", "주말에 부산에 갈 거예요", "감사합니다",
           "배송이 언제 도착하나요?"],
    "ar": ["مرحبا، كيف حالك؟", "سأصل بعد عشر دقائق", "شكرا جزيلا على المساعدة", "الاجتماع غدا في الساعة العاشرة", "أرسلت لك الملف",
           "هل يمكنك تأكيد الطلب؟"],
    "he": ["שלום, מה שלומך?", "נתראה מחר בבוקר", "תודה רבה", "הקובץ מצורף להודעה"],
    "hi": ["नमस्ते, आप कैसे हैं?", "मैं दस मिनट में पहुँच जाऊँगा", "धन्यवाद", "कल बैठक सुबह दस बजे है", "कृपया ऑर्डर की पुष्टि करें"],
    "th": ["สวัสดีครับ", "ขอบคุณมากค่ะ", "พรุ่งนี้เจอกันนะ", "ส่งเอกสารให้แล้วครับ"],
    "ru": ["Привет, как дела?", "Спасибо за помощь", "Встреча перенесена на пятницу", "Отправил тебе файл"],
    "el": ["Καλημέρα σε όλους", "Ευχαριστώ πολύ", "Τα λέμε αύριο"],
    # decomposed (NFD): letters followed by combining marks, as macOS file names and some keyboards give
    "vi": [unicodedata.normalize("NFD", s) for s in ["Xin chào, bạn khỏe không?", "Cảm ơn bạn rất nhiều", "Hẹn gặp lại ngày mai",
                                                      "Tôi sẽ gửi tài liệu sau"]],
    "fr": [unicodedata.normalize("NFD", s) for s in ["Ça marche, à demain !", "Le café était très bon", "Réunion déplacée à 14 h"]],
    "en": ["sounds good", "on my way", "can you review the PR?", "lunch?", "ship it"],
}
EMOJI = ["👍", "😂", "🎉", "❤️", "🙏", "🔥", "😅", "👀", "✅", "🚀", "👍🏽", "👋🏿", "👨‍👩‍👧‍👦", "🤦‍♀️", "🏳️‍🌈", "🇯🇵", "🇧🇷", "🇸🇦",
         "🧑🏻‍💻", "☕"]
NAMES = {"ja": ["田中太郎", "佐藤花子", "鈴木一郎"], "zh": ["王伟", "李娜", "张敏"], "ko": ["김민준", "이서연"], "ar": ["محمد", "فاطمة", "أحمد"],
         "he": ["דוד", "נועה"], "hi": ["अर्जुन", "प्रिया"], "th": ["สมชาย", "มาลี"], "ru": ["Алексей", "Мария"], "el": ["Νίκος", "Ελένη"],
         "vi": [unicodedata.normalize("NFD", "Nguyễn Văn An"), unicodedata.normalize("NFD", "Trần Thị Bình")],
         "fr": ["Zoé", "Élodie", "Loïc"], "en": ["Sam", "Alex", "Jordan"]}


def unicode_chat():
    """Chat messages in twelve scripts and languages: CJK, Arabic and Hebrew
    (right to left), Devanagari and Thai (combining vowel signs), Cyrillic,
    Greek, decomposed Vietnamese and French (combining accents), emoji with
    skin tones, ZWJ sequences and flags (outside the BMP)."""
    rng = rng_for("unicode_chat")
    langs = list(PHRASES)
    rooms = ["#général", "#開発", "#support-دعم", "#random", "#проект-x", "#디자인"]
    msgs = []
    t = T0
    for i in range(2400):
        lang = weighted(rng, [(l, 3 if l in ("ja", "zh", "ar", "en") else 2) for l in langs])
        parts = [rng.choice(PHRASES[lang]) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.5:
            parts.insert(rng.randint(0, len(parts)), "".join(rng.choice(EMOJI) for _ in range(rng.randint(1, 3))))
        if rng.random() < 0.15:
            parts.append(f"https://example.com/doc/{rng.randrange(10**6)}")
        t += skewed_int(rng, 1, 600, 3)
        msg = {"id": f"msg_{token(rng, 10)}", "room": rng.choice(rooms), "lang": lang,
               "user": {"id": rng.randrange(1, 5000), "display_name": rng.choice(NAMES[lang])},
               "text": " ".join(parts), "ts": t}
        if rng.random() < 0.3:
            msg["reactions"] = [{"emoji": e, "count": rng.randint(1, 12)} for e in pick_some(rng, EMOJI, rng.randint(1, 3))]
        if rng.random() < 0.1:
            msg["edited"] = True
        msgs.append(msg)
    return {"workspace": "Ünïcödé Corp 🌐", "messages": msgs}
