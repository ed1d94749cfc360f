"""Documents whose weight is in their structure: deep trees, wide records,
sparse mixed-type records, tiny messages, package metadata, paginated API
responses, logs."""

from __future__ import annotations

import base64
import hashlib

from .common import (
    ADJECTIVES, CITIES, FIRST_NAMES, LAST_NAMES, T0, USER_AGENTS, WORDS, date_only, email, hex_id, ipv4, iso,
    normalish, person, pick_some, rng_for, sentence, skewed, skewed_int, token, uuid4, weighted,
)

# --------------------------------------------------------------------------
# Deep tree
# --------------------------------------------------------------------------


def deep_tree():
    """A discussion thread as a forum API returns it: every comment holds its
    replies, and one argument runs 70 replies deep, so containers nest to
    about 150 levels; the other branches are shallow and bushy."""
    rng = rng_for("deep_tree")
    counter = [0]

    def comment(depth, chain):
        counter[0] += 1
        first, last = person(rng)
        c = {"id": f"t1_{token(rng, 7, '0123456789abcdefghijklmnopqrstuvwxyz')}", "author": f"{first.lower()}_{last.lower()}{rng.randint(1, 999)}",
             "score": skewed_int(rng, -20, 4000, 5), "created_utc": T0 + counter[0] * 37, "depth": depth,
             "body": sentence(rng, 4, 30), "replies": []}
        if chain and depth < 70:
            c["replies"].append(comment(depth + 1, True))
        if depth < 4:
            for _ in range(rng.randint(0, 4 - depth)):
                c["replies"].append(comment(depth + 1, False))
        if not c["replies"]:
            del c["replies"]
        return c

    roots = [comment(0, i == 1) for i in range(6)]
    return {"kind": "Listing", "data": {"post": {"id": "t3_1b7xq2k", "title": "What is the best serialization format for logs?",
                                                  "subreddit": "programming", "num_comments": counter[0]},
                                         "children": roots}}


# --------------------------------------------------------------------------
# Wide records
# --------------------------------------------------------------------------


def wide_records():
    """Analytics events exported flat, as a warehouse table: 74 keys per
    record, the same keys in the same order every time."""
    rng = rng_for("wide_records")
    pages = ["/", "/pricing", "/blog/how-we-scaled-postgres", "/docs/getting-started", "/signup", "/checkout", "/account/settings",
             "/products/widget-pro", "/search", "/careers"]
    events = ["page_view", "page_view", "scroll", "click", "session_start", "add_to_cart", "begin_checkout", "purchase", "sign_up"]
    out = []
    t_us = T0 * 1_000_000
    sessions = [(hex_id(rng, 16), rng.randrange(10**9, 4 * 10**9), rng.choice(CITIES)) for _ in range(180)]
    for i in range(1500):
        t_us += skewed_int(rng, 1000, 30_000_000, 3)
        sid, uid, (city, region, country) = rng.choice(sessions)
        ev = rng.choice(events)
        page = rng.choice(pages)
        value = round(rng.randint(5, 400) + rng.choice([0.99, 0.0, 0.5]), 2) if ev == "purchase" else None
        rec = {
            "event_date": date_only(t_us // 1_000_000), "event_timestamp": t_us, "event_name": ev,
            "event_previous_timestamp": t_us - skewed_int(rng, 0, 10**9, 4), "event_value_in_usd": value,
            "event_bundle_sequence_id": i + 1, "event_server_timestamp_offset": rng.randint(-900, 900),
            "user_id": None if rng.random() < 0.6 else f"u_{uid}", "user_pseudo_id": f"{uid}.{T0 - rng.randrange(10**7)}",
            "user_first_touch_timestamp": T0 * 1_000_000 - rng.randrange(10**13), "user_ltv_revenue": round(skewed(rng, 0, 900, 4), 2),
            "user_ltv_currency": "USD", "privacy_analytics_storage": rng.choice(["Yes", "No", None]),
            "privacy_ads_storage": rng.choice(["Yes", "No", None]), "device_category": rng.choice(["desktop", "mobile", "tablet"]),
            "device_mobile_brand_name": rng.choice(["Apple", "Google", "Samsung", "Xiaomi", None]),
            "device_mobile_model_name": rng.choice(["iPhone", "Pixel 8", "Galaxy S23", None]),
            "device_operating_system": rng.choice(["Windows", "Macintosh", "iOS", "Android", "Linux"]),
            "device_operating_system_version": rng.choice(["Windows 10", "macOS 14.3", "iOS 17.3.1", "Android 14", "Linux"]),
            "device_language": rng.choice(["en-us", "de-de", "ja-jp", "fr-fr", "pt-br", "es-es"]),
            "device_is_limited_ad_tracking": rng.choice(["No", "Yes"]), "device_browser": rng.choice(["Chrome", "Safari", "Firefox", "Edge"]),
            "device_browser_version": f"{rng.randint(100, 123)}.0.{rng.randint(0, 6300)}.{rng.randint(0, 200)}",
            "device_web_info_hostname": "www.example.com", "geo_continent": rng.choice(["Americas", "Europe", "Asia", "Oceania", "Africa"]),
            "geo_sub_continent": rng.choice(["Northern America", "Western Europe", "Eastern Asia", "Southern Asia"]),
            "geo_country": country, "geo_region": region, "geo_city": city, "geo_metro": "(not set)",
            "app_info": None, "traffic_source_name": rng.choice(["(direct)", "spring_sale", "(organic)", "newsletter_2024_03"]),
            "traffic_source_medium": rng.choice(["(none)", "organic", "cpc", "email", "referral"]),
            "traffic_source_source": rng.choice(["google", "(direct)", "bing", "newsletter", "t.co", "duckduckgo"]),
            "stream_id": "2740365123", "platform": "WEB", "ga_session_id": sid, "ga_session_number": rng.randint(1, 40),
            "session_engaged": rng.choice(["0", "1"]), "engagement_time_msec": skewed_int(rng, 0, 600000, 3),
            "page_location": f"https://www.example.com{page}" + (f"?utm_source=newsletter&utm_campaign=spring_{rng.randint(1, 9)}" if rng.random() < 0.2 else ""),
            "page_title": page.strip("/").replace("/", " · ").replace("-", " ").title() or "Home",
            "page_referrer": rng.choice(["https://www.google.com/", "", "https://t.co/", "https://www.example.com/"]),
            "entrances": rng.choice([0, 1]), "percent_scrolled": rng.choice([None, 25, 50, 75, 90]),
            "link_url": None, "link_domain": None, "outbound": rng.random() < 0.05,
            "ecommerce_total_item_quantity": rng.randint(1, 5) if value else None, "ecommerce_purchase_revenue_in_usd": value,
            "ecommerce_purchase_revenue": value, "ecommerce_refund_value": None, "ecommerce_shipping_value": 4.99 if value else None,
            "ecommerce_tax_value": round(value * 0.0825, 2) if value else None, "ecommerce_unique_items": 1 if value else None,
            "ecommerce_transaction_id": f"T{rng.randrange(10**9)}" if value else None,
            "experiment_checkout_v2": rng.choice(["control", "variant_a", "variant_b"]), "experiment_pricing_page": rng.choice(["control", "annual_first"]),
            "feature_dark_mode": rng.random() < 0.3, "feature_new_nav": rng.random() < 0.5, "feature_chat_widget": rng.random() < 0.2,
            "screen_resolution": rng.choice(["1920x1080", "2560x1440", "390x844", "1440x900", "412x915"]),
            "viewport_width": rng.choice([1920, 1440, 390, 412, 1280]), "viewport_height": rng.choice([969, 789, 664, 760, 1300]),
            "connection_type": rng.choice(["4g", "wifi", "ethernet", None]), "rtt_ms": rng.choice([50, 100, 150, 300]),
            "downlink_mbps": rng.choice([1.45, 3.2, 10.0, 2.35]), "lcp_ms": skewed_int(rng, 300, 9000, 2),
            "cls": round(skewed(rng, 0, 0.5, 3), 4), "inp_ms": skewed_int(rng, 16, 900, 3), "ttfb_ms": skewed_int(rng, 20, 2500, 3),
            "consent_version": "v3", "is_bot": False, "ingested_at": iso(t_us // 1_000_000 + rng.randint(1, 300)),
        }
        out.append(rec)
    return out


# --------------------------------------------------------------------------
# Sparse heterogeneous records
# --------------------------------------------------------------------------


def sparse_records():
    """Contacts merged from several CRMs: each record has a different subset
    of fields, and one field may be an int in one record, a string or null in
    the next (zip codes, ages, scores, tags, addresses)."""
    rng = rng_for("sparse_records")
    out = []
    sources = ["hubspot", "salesforce", "csv_import", "zendesk", "manual"]
    for i in range(1400):
        first, last = person(rng)
        src = rng.choice(sources)
        rec = {"id": i + 1 if src != "salesforce" else f"003{token(rng, 12)}", "source": src}
        if rng.random() < 0.9:
            rec["name"] = f"{first} {last}" if rng.random() < 0.8 else {"first": first, "last": last}
        if rng.random() < 0.7:
            rec["email"] = email(rng, first, last) if rng.random() < 0.9 else [email(rng, first, last), email(rng, first, last)]
        if rng.random() < 0.5:
            z = rng.randrange(1000, 99999)
            rec["zip"] = weighted(rng, [(z, 3), (f"{z:05d}", 3), (None, 1), (f"{z:05d}-{rng.randrange(10000):04d}", 1)])
        if rng.random() < 0.4:
            rec["age"] = weighted(rng, [(rng.randint(18, 90), 5), (str(rng.randint(18, 90)), 2), ("unknown", 1), (None, 1), (rng.randint(18, 90) + 0.5, 1)])
        if rng.random() < 0.6:
            rec["score"] = weighted(rng, [(rng.randint(0, 100), 3), (round(rng.random() * 100, 1), 2), ("A", 1), (None, 1), (True, 1)])
        if rng.random() < 0.5:
            tags = pick_some(rng, ["vip", "churn-risk", "newsletter", "partner", "trial", "enterprise", "beta"], rng.randint(0, 3))
            rec["tags"] = weighted(rng, [(tags, 3), (",".join(tags), 2), (None, 1)])
        if rng.random() < 0.45:
            city, region, country = rng.choice(CITIES)
            rec["address"] = weighted(rng, [
                ({"street": f"{rng.randint(1, 9999)} {rng.choice(LAST_NAMES)} St", "city": city, "region": region, "country": country}, 3),
                (f"{rng.randint(1, 9999)} {rng.choice(LAST_NAMES)} Ave, {city}, {country}", 2),
                ({"city": city}, 1),
            ])
        if rng.random() < 0.3:
            rec["phone"] = weighted(rng, [(f"+1-{rng.randint(200, 999)}-555-{rng.randrange(10000):04d}", 3), (rng.randint(2000000000, 9999999999), 1)])
        if rng.random() < 0.35:
            rec["last_seen"] = weighted(rng, [(iso(T0 - rng.randrange(10**7)), 3), (T0 - rng.randrange(10**7), 2), (None, 1)])
        if rng.random() < 0.25:
            rec["opt_in"] = weighted(rng, [(True, 3), (False, 2), ("yes", 1), (1, 1)])
        for k in range(rng.randint(0, 3)):
            rec[f"custom_{rng.randint(1, 40)}"] = weighted(rng, [(rng.choice(WORDS), 2), (rng.randint(0, 10**6), 2), (round(rng.random(), 3), 1), (None, 1), ([], 1), ({}, 1)])
        out.append(rec)
    return out


# --------------------------------------------------------------------------
# Tiny messages (measured one record per buffer)
# --------------------------------------------------------------------------


def tiny_messages():
    """A message-queue stream: 10,000 small records (trade ticks, IoT
    readings, job envelopes, presence pings), each sent as its own buffer."""
    rng = rng_for("tiny_messages")
    symbols = [("BTCUSDT", 64000.0, 2), ("ETHUSDT", 3400.0, 2), ("SOLUSDT", 130.0, 3), ("DOGEUSDT", 0.14, 5)]
    price = {s: p for s, p, _ in symbols}
    out = []
    t = T0 * 1000
    trade_id = 3_456_789_000
    for i in range(10_000):
        t += skewed_int(rng, 0, 400, 3)
        k = weighted(rng, [("trade", 5), ("iot", 3), ("job", 1), ("presence", 1)])
        if k == "trade":
            s, _, dec = rng.choice(symbols)
            price[s] *= 1.0 + 0.0004 * normalish(rng)
            trade_id += rng.randint(1, 30)
            out.append({"e": "trade", "E": t, "s": s, "t": trade_id, "p": f"{price[s]:.{dec}f}",
                        "q": f"{skewed(rng, 0.0001, 3.0, 4):.5f}", "m": rng.random() < 0.5})
        elif k == "iot":
            out.append({"dev": f"th-{rng.randint(1, 60):02d}", "ts": t // 1000, "t": round(19 + rng.random() * 6, 1),
                        "h": rng.randint(30, 70), "bat": round(3.3 + rng.random() * 0.9, 2)})
        elif k == "job":
            first, last = person(rng)
            out.append({"job": rng.choice(["send_email", "resize_image", "sync_account"]), "id": uuid4(rng), "attempt": weighted(rng, [(1, 8), (2, 2), (3, 1)]),
                        "args": {"to": email(rng, first, last), "template": rng.choice(["welcome", "reset", "receipt"])},
                        "enqueued_at": iso(t // 1000, frac=f".{t % 1000:03d}")})
        else:
            out.append({"type": "presence", "user": rng.randint(1, 90000), "status": rng.choice(["online", "away", "offline"])})
    return out


# --------------------------------------------------------------------------
# Package metadata
# --------------------------------------------------------------------------


def _semver_list(rng, n):
    out = []
    major, minor, patch = 0, 1, 0
    for _ in range(n):
        r = rng.random()
        if r < 0.05:
            major, minor, patch = major + 1, 0, 0
        elif r < 0.3:
            minor, patch = minor + 1, 0
        else:
            patch += 1
        v = f"{major}.{minor}.{patch}"
        if rng.random() < 0.08:
            out.append(f"{v}-{rng.choice(['alpha', 'beta', 'rc'])}.{rng.randint(0, 4)}")
        out.append(v)
    return out


def npm_packument():
    """An npm registry document: one entry per published version (scripts,
    dependency maps, dist with sha1 shasum, sha512 integrity and signature,
    tarball URL) and a publication time per version."""
    rng = rng_for("npm_packument")
    name = "fast-widget-kit"
    versions = _semver_list(rng, 170)
    deps_pool = ["debug", "ms", "semver", "chalk", "commander", "lodash", "tslib", "picomatch", "glob", "yaml", "ws", "undici",
                 "zod", "minimist", "supports-color", "escape-string-regexp", "fast-deep-equal", "mime-types"]
    dev_pool = ["typescript", "eslint", "prettier", "vitest", "mocha", "@types/node", "tsup", "rollup", "c8", "husky"]
    maintainers = [{"name": n, "email": f"{n}@example.dev"} for n in ["ljharb", "wesleytodd", "sindresorhus", "isaacs"]]
    vmap, times = {}, {}
    t = T0 - 86400 * 2000
    for v in versions:
        t += skewed_int(rng, 3600, 86400 * 40, 3)
        tarball = f"https://registry.npmjs.org/{name}/-/{name}-{v}.tgz"
        digest = hashlib.sha512(f"{name}@{v}".encode()).digest()
        vmap[v] = {
            "name": name, "version": v, "description": "Small, fast widgets for Node.js and the browser",
            "main": "dist/index.js", "types": "dist/index.d.ts", "license": "MIT",
            "scripts": {"build": "tsup src/index.ts --dts", "test": "vitest run", "lint": "eslint ."},
            "dependencies": {d: f"^{rng.randint(0, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}" for d in pick_some(rng, deps_pool, rng.randint(1, 7))},
            "devDependencies": {d: f"^{rng.randint(1, 20)}.{rng.randint(0, 9)}.0" for d in pick_some(rng, dev_pool, rng.randint(2, 7))},
            "engines": {"node": rng.choice([">=14", ">=16", ">=18"])},
            "gitHead": hex_id(rng, 40),
            "_id": f"{name}@{v}", "_nodeVersion": rng.choice(["18.19.0", "20.11.1", "21.6.2"]), "_npmVersion": rng.choice(["9.8.1", "10.2.4"]),
            "dist": {
                "integrity": "sha512-" + base64.b64encode(digest).decode(), "shasum": hashlib.sha1(tarball.encode()).hexdigest(),
                "tarball": tarball, "fileCount": rng.randint(8, 60), "unpackedSize": rng.randint(20000, 400000),
                "signatures": [{"keyid": "SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA",
                                "sig": "MEUCI" + token(rng, 90, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") + "="}],
            },
            "_npmUser": rng.choice(maintainers), "maintainers": maintainers,
            "directories": {}, "_hasShrinkwrap": False,
        }
        times[v] = iso(t, frac=f".{rng.randrange(1000):03d}")
    return {"_id": name, "_rev": f"{len(versions)}-{hex_id(rng, 32)}", "name": name,
            "dist-tags": {"latest": versions[-1], "next": versions[-1]},
            "versions": vmap, "time": {"created": iso(T0 - 86400 * 2000, frac=".000"), "modified": times[versions[-1]], **times},
            "maintainers": maintainers, "keywords": ["widget", "ui", "fast"], "license": "MIT",
            "repository": {"type": "git", "url": f"git+https://github.com/example/{name}.git"},
            "readme": "# fast-widget-kit\n\n" + "\n\n".join(sentence(rng, 12, 40) for _ in range(6))}


def pypi_release():
    """The PyPI JSON API for one release of a package: classifiers,
    requirement strings, project URLs, files with md5/sha256/blake2b
    digests and upload times."""
    rng = rng_for("pypi_release")
    name, version = "fastwidget", "2.4.1"
    files = []
    for tag in ["cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64", "cp312-cp312-macosx_11_0_arm64", "cp312-cp312-win_amd64"]:
        fn = f"{name}-{version}-{tag}.whl"
        t = T0 - 86400 * 3 + rng.randrange(3600)
        files.append({"comment_text": "", "digests": {"blake2b_256": hex_id(rng, 64), "md5": hex_id(rng, 32), "sha256": hex_id(rng, 64)},
                      "downloads": -1, "filename": fn, "has_sig": False, "md5_digest": hex_id(rng, 32), "packagetype": "bdist_wheel",
                      "python_version": tag[:5], "requires_python": ">=3.9", "size": rng.randint(150000, 900000),
                      "upload_time": iso(t, offset_min=None), "upload_time_iso_8601": iso(t, frac=f".{rng.randrange(10**6):06d}"),
                      "url": f"https://files.pythonhosted.org/packages/{hex_id(rng, 2)}/{hex_id(rng, 2)}/{hex_id(rng, 60)}/{fn}",
                      "yanked": False, "yanked_reason": None})
    return {
        "info": {"author": "Ada Example", "author_email": "ada@example.org", "bugtrack_url": None,
                 "classifiers": ["Development Status :: 5 - Production/Stable", "Intended Audience :: Developers",
                                 "License :: OSI Approved :: MIT License", "Programming Language :: Python :: 3",
                                 "Programming Language :: Python :: 3.11", "Programming Language :: Python :: 3.12",
                                 "Topic :: Software Development :: Libraries"],
                 "description_content_type": "text/markdown", "docs_url": None, "home_page": "", "keywords": "widgets,fast",
                 "license": "MIT", "maintainer": "", "name": name, "package_url": f"https://pypi.org/project/{name}/",
                 "project_urls": {"Documentation": f"https://{name}.readthedocs.io", "Source": f"https://github.com/example/{name}"},
                 "release_url": f"https://pypi.org/project/{name}/{version}/",
                 "requires_dist": ["typing-extensions>=4.6; python_version < \"3.11\"", "numpy>=1.24", "pytest>=7; extra == \"test\""],
                 "requires_python": ">=3.9", "summary": "Fast widgets", "version": version, "yanked": False},
        "last_serial": 22310457, "urls": files, "vulnerabilities": [],
    }


# --------------------------------------------------------------------------
# API response with nested pagination
# --------------------------------------------------------------------------


def api_paginated():
    """A JSON:API-style page: resources with attributes, relationships that
    carry their own pagination, an included section, cursor links."""
    rng = rng_for("api_paginated")
    base = "https://api.example.com/v2"
    data, included, seen = [], [], set()
    for i in range(25):
        pid = str(48000 + i * 3 + rng.randrange(3))
        cids = [str(rng.randrange(10**6, 10**7)) for _ in range(rng.randint(0, 5))]
        author = str(rng.randrange(100, 160))
        data.append({
            "type": "articles", "id": pid,
            "attributes": {"title": sentence(rng, 3, 9)[:-1], "slug": f"article-{pid}", "published_at": iso(T0 - rng.randrange(10**7)),
                           "word_count": rng.randint(300, 4000), "tags": pick_some(rng, WORDS, rng.randint(0, 4)), "draft": False},
            "relationships": {
                "author": {"data": {"type": "people", "id": author}, "links": {"related": f"{base}/articles/{pid}/author"}},
                "comments": {"data": [{"type": "comments", "id": c} for c in cids],
                             "meta": {"page": {"size": 5, "total": len(cids) + rng.randint(0, 40), "cursor": token(rng, 16)}},
                             "links": {"related": f"{base}/articles/{pid}/comments",
                                       "next": f"{base}/articles/{pid}/comments?page%5Bsize%5D=5&page%5Bafter%5D={token(rng, 16)}"}}},
            "links": {"self": f"{base}/articles/{pid}"},
        })
        if author not in seen:
            seen.add(author)
            first, last = person(rng)
            included.append({"type": "people", "id": author, "attributes": {"name": f"{first} {last}", "twitter": f"@{first.lower()}{rng.randint(1, 99)}"},
                             "links": {"self": f"{base}/people/{author}"}})
        for c in cids[:2]:
            included.append({"type": "comments", "id": c, "attributes": {"body": sentence(rng, 5, 25), "created_at": iso(T0 - rng.randrange(10**6))},
                             "relationships": {"author": {"data": {"type": "people", "id": str(rng.randrange(100, 160))}}}})
    cur = token(rng, 24)
    return {"jsonapi": {"version": "1.1"}, "meta": {"page": {"size": 25, "total": 1843, "number": 7}, "request_id": uuid4(rng)},
            "links": {"self": f"{base}/articles?page%5Bnumber%5D=7&page%5Bsize%5D=25",
                      "first": f"{base}/articles?page%5Bnumber%5D=1&page%5Bsize%5D=25",
                      "prev": f"{base}/articles?page%5Bnumber%5D=6&page%5Bsize%5D=25",
                      "next": f"{base}/articles?page%5Bnumber%5D=8&page%5Bsize%5D=25&page%5Bcursor%5D={cur}",
                      "last": f"{base}/articles?page%5Bnumber%5D=74&page%5Bsize%5D=25"},
            "data": data, "included": included}


# --------------------------------------------------------------------------
# Event log
# --------------------------------------------------------------------------


def event_log():
    """Structured service logs (one JSON object per line, collected into an
    array): levels, loggers, messages with variable parts, trace and span
    ids, HTTP fields, durations with three decimals, occasional errors with
    stack traces."""
    rng = rng_for("event_log")
    loggers = ["api.http", "api.auth", "worker.billing", "db.pool", "cache.redis", "scheduler"]
    paths = ["/v1/orders", "/v1/orders/{id}", "/v1/users/{id}", "/v1/search", "/healthz", "/v1/payments", "/v1/sessions"]
    out = []
    t = T0 * 1000
    for i in range(6500):
        t += skewed_int(rng, 0, 2000, 4)
        level = weighted(rng, [("info", 80), ("debug", 10), ("warn", 7), ("error", 3)])
        lg = rng.choice(loggers)
        rec = {"ts": iso(t // 1000, frac=f".{t % 1000:03d}"), "level": level, "logger": lg,
               "host": f"api-{rng.randint(1, 12):02d}.prod.internal", "pid": rng.choice([4312, 4313, 4318, 5120]),
               "trace_id": hex_id(rng, 32), "span_id": hex_id(rng, 16)}
        if lg == "api.http":
            p = rng.choice(paths).replace("{id}", str(rng.randrange(10**6)))
            status = weighted(rng, [(200, 80), (201, 5), (204, 3), (400, 4), (401, 2), (404, 3), (500, 2), (503, 1)])
            rec["msg"] = "request completed"
            rec["http"] = {"method": rng.choice(["GET", "GET", "POST", "PUT", "DELETE"]), "path": p, "status": status,
                           "duration_ms": round(skewed(rng, 0.2, 2500, 4), 3), "bytes": skewed_int(rng, 0, 250000, 4),
                           "client_ip": ipv4(rng), "user_agent": rng.choice(USER_AGENTS)}
            if rng.random() < 0.6:
                rec["user_id"] = rng.randrange(1, 10**6)
        elif lg == "db.pool":
            rec["msg"] = rng.choice(["acquired connection", "released connection", "pool exhausted, waiting"])
            rec["pool"] = {"size": 20, "in_use": rng.randint(0, 20), "wait_ms": round(skewed(rng, 0, 150, 5), 3)}
        elif lg == "api.auth":
            rec["msg"] = weighted(rng, [("token refreshed", 6), ("login succeeded", 3), ("login failed: bad password", 1)])
            rec["user_id"] = rng.randrange(1, 10**6)
            rec["method"] = rng.choice(["password", "oauth:google", "oauth:github", "sso:okta"])
        elif lg == "cache.redis":
            rec["msg"] = rng.choice(["cache hit", "cache miss", "evicted"])
            rec["key"] = f"user:{rng.randrange(10**6)}:profile" if rng.random() < 0.5 else f"search:{hex_id(rng, 12)}"
        else:
            rec["msg"] = f"{rng.choice(['processed', 'scheduled', 'retrying', 'skipped'])} job {rng.choice(['invoice', 'digest', 'export'])}-{rng.randrange(10**5)}"
            rec["attempt"] = rng.randint(1, 3)
        if level == "error":
            rec["error"] = {"type": rng.choice(["TimeoutError", "ConnectionResetError", "KeyError", "ValidationError"]),
                            "message": sentence(rng, 3, 10),
                            "stack": "\n".join(f"  File \"/app/{rng.choice(['handlers', 'models', 'db', 'lib'])}/{rng.choice(WORDS)}.py\", "
                                               f"line {rng.randint(10, 900)}, in {rng.choice(WORDS)}_{rng.choice(WORDS)}"
                                               for _ in range(rng.randint(3, 8)))}
        out.append(rec)
    return out
