"""Documents whose weight is in their numbers: floats of every precision,
coordinates, prices, integers of every size."""

from __future__ import annotations

import struct
from math import sqrt  # correctly rounded (IEEE 754), unlike ** 0.5 which goes through pow()

from .common import (
    CITIES, T0, TWO_PI, cos, hex_id, iso, normalish, pick_some, rng_for, sin, skewed, skewed_int, token, uuid4,
    weighted, BRANDS, COLORS, ADJECTIVES, PRODUCT_NOUNS,
)


def f32(x: float) -> float:
    """The nearest float32, as a double (what a float32 array gives when it is printed as doubles)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


# --------------------------------------------------------------------------


def weather_current():
    """An OpenWeatherMap-style 'current weather' response: ~1 KB of short decimals."""
    rng = rng_for("weather_current")
    out = []
    for name, region, country in pick_some(rng, CITIES, 2):
        temp = round(268.0 + rng.random() * 30.0, 2)
        out.append({
            "coord": {"lon": round(-180 + rng.random() * 360, 4), "lat": round(-60 + rng.random() * 130, 4)},
            "weather": [{"id": 803, "main": "Clouds", "description": "broken clouds", "icon": "04d"}],
            "base": "stations",
            "main": {
                "temp": temp, "feels_like": round(temp - rng.random() * 3, 2),
                "temp_min": round(temp - 1.5, 2), "temp_max": round(temp + 1.2, 2),
                "pressure": rng.randint(990, 1030), "humidity": rng.randint(30, 95),
                "sea_level": rng.randint(1000, 1030), "grnd_level": rng.randint(960, 1010),
            },
            "visibility": 10000,
            "wind": {"speed": round(rng.random() * 9, 2), "deg": rng.randrange(360), "gust": round(rng.random() * 14, 2)},
            "clouds": {"all": rng.randrange(101)},
            "dt": T0 + rng.randrange(86400),
            "sys": {"type": 2, "id": rng.randint(2000000, 2099999), "country": country,
                    "sunrise": T0 + 23000 + rng.randrange(3000), "sunset": T0 + 64000 + rng.randrange(3000)},
            "timezone": rng.choice([-18000, 0, 3600, 7200, 32400]),
            "id": rng.randint(1000000, 6000000),
            "name": name,
            "cod": 200,
        })
    return out


def sensor_floats():
    """Telemetry batches: each channel an array of doubles computed by a
    device (15-17 significant digits), plus trend figures rounded to one
    decimal."""
    rng = rng_for("sensor_floats")
    devices = []
    for i in range(24):
        n = 300
        phase = rng.random() * TWO_PI
        base_t = 18.0 + rng.random() * 8.0
        base_h = 35.0 + rng.random() * 30.0
        base_p = 1003.0 + rng.random() * 20.0
        temps, hums, press, vib, trend = [], [], [], [], []
        drift = (rng.random() - 0.5) * 0.002
        for k in range(n):
            x = TWO_PI * k / 240.0 + phase
            t = base_t + 2.5 * sin(x) + drift * k + 0.05 * normalish(rng)
            temps.append(t)
            hums.append(base_h - 4.0 * sin(x) + 0.3 * normalish(rng))
            press.append(base_p + 0.8 * cos(x / 3.0) + 0.02 * normalish(rng))
            vib.append(abs(0.002 * normalish(rng)) * (1.0 + (k % 50 == 0) * 40.0))
            if k % 10 == 9:
                # degrees per hour over the last 10 readings, as the firmware rounds it
                # (+ 0.0 turns the -0.0 of a small negative into 0.0, as the firmware does)
                trend.append(round((temps[-1] - temps[-10]) * 360.0, 1) + 0.0)
        devices.append({
            "device_id": f"env-{1000 + i:04d}",
            "firmware": rng.choice(["2.4.1", "2.4.3", "2.5.0-rc1"]),
            "location": {"site": rng.choice(["warehouse-a", "warehouse-b", "cold-store", "office"]), "rack": rng.randint(1, 40)},
            "start_ms": (T0 + i * 3600) * 1000,
            "interval_ms": 1000,
            "calibration": {"temperature_offset": round((rng.random() - 0.5) * 0.4, 2) + 0.0,
                            "gain": 1.0 + (rng.random() - 0.5) * 1e-6},
            "temperature_c": temps,
            "humidity_pct": hums,
            "pressure_hpa": press,
            "vibration_g": vib,
            "trend_c_per_h": trend,
        })
    return {"schema": "telemetry.batch/3", "gateway": "gw-eu-central-07", "devices": devices}


def embeddings():
    """An embeddings API response where the float32 vectors were printed as
    doubles (json.dumps of a float32 array's tolist()): every value is a
    float32, written with up to 17 significant digits."""
    rng = rng_for("embeddings")
    dim = 384
    data = []
    for i in range(40):
        v = [normalish(rng) for _ in range(dim)]
        norm = sqrt(sum(x * x for x in v))
        data.append({"object": "embedding", "index": i, "embedding": [f32(x / norm) for x in v]})
    return {
        "object": "list",
        "data": data,
        "model": "all-MiniLM-L6-v2",
        "usage": {"prompt_tokens": 40 * 23, "total_tokens": 40 * 23},
    }


def geojson():
    """A GeoJSON FeatureCollection of building footprints (7 decimals, as
    OpenStreetMap stores them), roads (6) and points of interest (5)."""
    rng = rng_for("geojson")
    lon0, lat0 = -122.3321, 47.6062
    m_lat = 1.0 / 111320.0
    m_lon = 1.0 / (111320.0 * cos(lat0 * 3.141592653589793 / 180.0))
    streets = ["Pine St", "Pike St", "Union St", "University St", "Seneca St", "Spring St", "Madison St",
               "1st Ave", "2nd Ave", "3rd Ave", "4th Ave", "5th Ave", "6th Ave", "Western Ave"]
    feats = []
    for i in range(900):
        cx = lon0 + (rng.random() - 0.5) * 0.03
        cy = lat0 + (rng.random() - 0.5) * 0.02
        w, h = 8 + rng.random() * 40, 8 + rng.random() * 30
        a = rng.random() * 3.141592653589793
        ca, sa = cos(a), sin(a)
        ring = []
        for dx, dy in ((-w, -h), (w, -h), (w, h), (-w, h)):
            x = (dx * ca - dy * sa) / 2
            y = (dx * sa + dy * ca) / 2
            ring.append([round(cx + x * m_lon, 7), round(cy + y * m_lat, 7)])
        ring.append(list(ring[0]))
        props = {"osm_id": 200000000 + rng.randrange(800000000), "building": rng.choice(["yes", "yes", "commercial", "apartments", "retail", "office"])}
        if rng.random() < 0.6:
            props["addr:housenumber"] = str(rng.randint(1, 2400))
            props["addr:street"] = rng.choice(streets)
        if rng.random() < 0.5:
            props["building:levels"] = rng.randint(1, 40)
        if rng.random() < 0.3:
            props["height"] = round(3 + rng.random() * 120, 1)
        feats.append({"type": "Feature", "id": f"way/{props['osm_id']}", "properties": props,
                      "geometry": {"type": "Polygon", "coordinates": [ring]}})
    for i in range(60):
        x, y = lon0 + (rng.random() - 0.5) * 0.03, lat0 + (rng.random() - 0.5) * 0.02
        heading = rng.random() * TWO_PI
        line = []
        for k in range(rng.randint(4, 25)):
            heading += (rng.random() - 0.5) * 0.3
            x += cos(heading) * 40 * m_lon
            y += sin(heading) * 40 * m_lat
            line.append([round(x, 6), round(y, 6)])
        feats.append({"type": "Feature", "id": f"way/{400000000 + i}",
                      "properties": {"highway": rng.choice(["residential", "primary", "secondary", "footway", "service"]),
                                     "name": rng.choice(streets), "maxspeed": rng.choice(["25 mph", "30 mph", None])},
                      "geometry": {"type": "LineString", "coordinates": line}})
    amenities = ["cafe", "restaurant", "bank", "pharmacy", "fuel", "bicycle_parking", "bench", "toilets"]
    for i in range(300):
        feats.append({"type": "Feature", "id": f"node/{1000000000 + rng.randrange(9000000000)}",
                      "properties": {"amenity": rng.choice(amenities), "wheelchair": rng.choice(["yes", "no", "limited", None])},
                      "geometry": {"type": "Point", "coordinates": [round(lon0 + (rng.random() - 0.5) * 0.03, 5),
                                                                     round(lat0 + (rng.random() - 0.5) * 0.02, 5)]}})
    return {"type": "FeatureCollection", "bbox": [-122.3471, 47.5962, -122.3171, 47.6162],
            "metadata": {"source": "OpenStreetMap contributors", "license": "ODbL-1.0", "generated": iso(T0 + 3600)},
            "features": feats}


def mesh():
    """3-D meshes: a UV sphere in three.js BufferGeometry form (flat arrays,
    positions to 6 decimals, normals to 4, UVs to 5, integer indices) and a
    terrain patch as nested [x, y, z] vertices and [a, b, c] faces."""
    rng = rng_for("mesh")
    seg_w, seg_h = 96, 64
    pos, nor, uv, idx = [], [], [], []
    r = 1.75
    for y in range(seg_h + 1):
        v = y / seg_h
        for x in range(seg_w + 1):
            u = x / seg_w
            px = -r * cos(u * TWO_PI) * sin(v * 3.141592653589793)
            py = r * cos(v * 3.141592653589793)
            pz = r * sin(u * TWO_PI) * sin(v * 3.141592653589793)
            bump = 1.0 + 0.015 * normalish(rng)
            # + 0.0: the exporter writes 0.0 where rounding leaves -0.0
            pos += [round(px * bump, 6) + 0.0, round(py * bump, 6) + 0.0, round(pz * bump, 6) + 0.0]
            ln = sqrt(px * px + py * py + pz * pz) or 1.0
            nor += [round(px / ln, 4) + 0.0, round(py / ln, 4) + 0.0, round(pz / ln, 4) + 0.0]
            uv += [round(u, 5), round(1 - v, 5)]
    for y in range(seg_h):
        for x in range(seg_w):
            a = y * (seg_w + 1) + x
            b = a + seg_w + 1
            idx += [a, b, a + 1, b, b + 1, a + 1]
    sphere = {
        "uuid": uuid4(rng), "type": "BufferGeometry",
        "data": {"attributes": {
            "position": {"itemSize": 3, "type": "Float32Array", "array": pos, "normalized": False},
            "normal": {"itemSize": 3, "type": "Float32Array", "array": nor, "normalized": False},
            "uv": {"itemSize": 2, "type": "Float32Array", "array": uv, "normalized": False}},
            "index": {"type": "Uint16Array", "array": idx},
            "boundingSphere": {"center": [0, 0, 0], "radius": r}},
    }
    n = 48
    verts, faces = [], []
    for j in range(n):
        for i in range(n):
            h = 12.0 * sin(i / 7.0) * cos(j / 9.0) + 3.0 * normalish(rng)
            verts.append([round(i * 2.5 - 60.0, 6) + 0.0, round(h, 6) + 0.0, round(j * 2.5 - 60.0, 6) + 0.0])
    for j in range(n - 1):
        for i in range(n - 1):
            a = j * n + i
            faces.append([a, a + 1, a + n])
            faces.append([a + 1, a + n + 1, a + n])
    terrain = {"name": "terrain_patch_07", "units": "m", "vertices": verts, "faces": faces,
               "material": {"name": "grass", "color": [0.25, 0.52, 0.18], "roughness": 0.9}}
    return {"metadata": {"version": 4.6, "type": "Object", "generator": "Object3D.toJSON"},
            "geometries": [sphere], "meshes": [terrain]}


def prices():
    """A product catalogue page: prices (19.99), percentages (12.5), ratings
    (4.3), tax rates, weights; the decimals a shop prints."""
    rng = rng_for("prices")
    items = []
    endings = [0.99, 0.95, 0.49, 0.0, 0.5, 0.89]
    for i in range(420):
        base = rng.choice([4, 9, 12, 14, 19, 24, 29, 34, 39, 49, 59, 79, 99, 129, 149, 199, 249, 399])
        price = round(base + rng.choice(endings), 2)
        disc = rng.choice([0, 0, 0, 5, 10, 12.5, 15, 20, 25, 30, 33.3, 40])
        variants = []
        for size in pick_some(rng, ["XS", "S", "M", "L", "XL", "XXL"], rng.randint(0, 4)):
            variants.append({"size": size, "color": rng.choice(COLORS), "price": round(price + rng.choice([0, 0, 1, 2.5, 5]), 2),
                             "stock": skewed_int(rng, 0, 250)})
        items.append({
            "sku": f"SKU-{100000 + rng.randrange(900000)}",
            "title": f"{rng.choice(BRANDS)} {rng.choice(ADJECTIVES).title()} {rng.choice(PRODUCT_NOUNS).replace('-', ' ').title()}",
            "price": price,
            "list_price": round(price / (1 - disc / 100), 2) if disc else price,
            "currency": weighted(rng, [("USD", 6), ("EUR", 3), ("GBP", 1)]),
            "discount_pct": disc,
            "rating": round(2.5 + rng.random() * 2.5, 1),
            "review_count": skewed_int(rng, 0, 25000),
            "tax_rate": rng.choice([0.0, 0.0725, 0.0825, 0.19, 0.2, 0.07]),
            "weight_kg": round(0.05 + rng.random() * 12, rng.choice([1, 2, 3])),
            "dimensions_cm": [round(5 + rng.random() * 60, 1), round(5 + rng.random() * 40, 1), round(1 + rng.random() * 30, 1)],
            "in_stock": rng.random() < 0.85,
            "shipping": {"standard": rng.choice([0, 4.99, 5.99, 7.5]), "express": rng.choice([9.99, 14.99, 19.5])},
            "variants": variants,
        })
    return {"page": 1, "per_page": len(items), "fx": {"EURUSD": 1.0847, "GBPUSD": 1.2712, "USDJPY": 149.62},
            "items": items}


def integers():
    """Integers of every size: a followers/ids page (ids below 2^32 from
    old accounts, 64-bit snowflakes from new ones, beyond 2^53), weekly
    commit counters, signed ledger deltas, millisecond timestamps."""
    rng = rng_for("integers")
    ids = []
    for _ in range(5000):
        if rng.random() < 0.35:
            ids.append(rng.randrange(12, 4_000_000_000))
        else:
            # Twitter snowflake: ms since the 2010 epoch << 22 | worker << 12 | sequence
            ms = rng.randrange(300_000_000_000, 450_000_000_000)
            ids.append((ms << 22) | (rng.randrange(1024) << 12) | rng.randrange(4096))
    weeks = []
    for w in range(104):
        days = [skewed_int(rng, 0, 40, 4) for _ in range(7)]
        weeks.append({"days": days, "total": sum(days), "week": T0 - (104 - w) * 604800})
    contributors = []
    for _ in range(30):
        commits = skewed_int(rng, 1, 3000, 4)
        contributors.append({"author_id": rng.randrange(1, 160_000_000), "total": commits,
                             "weeks": [{"w": T0 - (12 - k) * 604800, "a": skewed_int(rng, 0, 9000, 5),
                                        "d": skewed_int(rng, 0, 6000, 5), "c": skewed_int(rng, 0, 30, 4)} for k in range(12)]})
    deltas = []
    for _ in range(3000):
        mag = weighted(rng, [(100, 5), (10_000, 4), (1_000_000, 2), (100_000_000, 1)])
        deltas.append(rng.randrange(-mag, mag))
    stamps = []
    t = (T0 + 12345) * 1000
    for _ in range(2000):
        t += skewed_int(rng, 1, 90_000, 4)
        stamps.append(t)
    return {
        "followers": {"ids": ids, "next_cursor": ids[-1], "next_cursor_str": str(ids[-1]),
                      "previous_cursor": 0, "previous_cursor_str": "0"},
        "commit_activity": weeks,
        "contributors": contributors,
        "ledger_deltas_cents": deltas,
        "event_times_ms": stamps,
        "histogram": {"bounds": [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
                      "counts": [skewed_int(rng, 0, 500000, 2) for _ in range(13)]},
    }


def bigints():
    """Ethereum-style blocks written with JSON integers: wei amounts beyond
    2^64, unsigned 64-bit values in [2^63, 2^64), negative int256 swap
    amounts below -2^63, next to ordinary gas and nonce integers; swap
    price impacts rounded to two decimals, some of them -0.0."""
    rng = rng_for("bigints")
    blocks = []
    number = 19_350_000
    for b in range(12):
        txs = []
        for _ in range(rng.randint(8, 18)):
            value = weighted(rng, [
                (0, 2),
                (rng.randrange(10**15, 10**18), 3),                   # below 2^64
                (rng.randrange(10**18, 10**21) // 10**12 * 10**12, 4),  # 1-1000 ETH, beyond 2^64
                (rng.randrange(10**21, 10**26), 1),                   # token amounts, far beyond
            ])
            txs.append({
                "hash": "0x" + hex_id(rng, 64), "from": "0x" + hex_id(rng, 40), "to": "0x" + hex_id(rng, 40),
                "nonce": skewed_int(rng, 0, 90000, 4), "value": value, "gas": rng.choice([21000, 46000, 120000, 250000]),
                "gasPrice": rng.randrange(15, 90) * 10**9 + rng.randrange(10**9),
                "maxPriorityFeePerGas": rng.randrange(1, 3) * 10**9, "chainId": 1, "type": 2,
                "input": "0x" if rng.random() < 0.5 else "0xa9059cbb" + hex_id(rng, 128),
            })
        blocks.append({"number": number + b, "hash": "0x" + hex_id(rng, 64), "timestamp": T0 + b * 12,
                       "baseFeePerGas": rng.randrange(12 * 10**9, 40 * 10**9), "gasUsed": rng.randrange(8_000_000, 30_000_000),
                       "difficulty": 0, "totalDifficulty": 58750003716598352816469,
                       "transactions": txs})
    swaps = []
    for _ in range(120):
        a0 = rng.randrange(10**18, 10**24)
        a1 = rng.randrange(10**6, 10**14)
        if rng.random() < 0.5:
            a0 = -a0
        else:
            a1 = -a1
        swaps.append({"pool": "0x" + hex_id(rng, 40), "amount0": a0, "amount1": a1,
                      # rounded to two decimals, so a tiny negative impact prints as -0.0
                      "price_impact_pct": round((rng.random() - 0.5) * (0.02 if rng.random() < 0.5 else 3.0), 2),
                      "sqrtPriceX96": rng.randrange(2**90, 2**100), "liquidity": rng.randrange(10**15, 10**22),
                      "tick": rng.randrange(-887272, 887272)})
    u64 = [rng.randrange(2**63, 2**64) for _ in range(400)]  # e.g. xxhash64 digests, unsigned bloom keys
    return {"chain": "mainnet", "blocks": blocks, "swaps": swaps, "content_hashes_u64": u64,
            "supply": {"total_wei": 120_269_324_000_000_000_000_000_000, "burnt_wei": 4_212_874_551_203_337_710_482_116}}
