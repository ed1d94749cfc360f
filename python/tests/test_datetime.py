"""datetime and tersa.Timestamp: zones, ranges, nanoseconds, options."""

from __future__ import annotations

import datetime as dt

import pytest

import tersa

UTC = dt.timezone.utc


def rt(value, **kw):
    return tersa.loads(tersa.dumps(value, **kw), **{k: v for k, v in kw.items() if k == "option"})


def ts_of(data: bytes) -> tersa.Timestamp:
    return tersa.loads(data, option=tersa.OPT_TIMESTAMP)


def test_naive_is_floating():
    d = dt.datetime(2025, 4, 16, 9, 23, 47, 123456)
    out = rt(d)
    assert out == d and out.tzinfo is None
    t = ts_of(tersa.dumps(d))
    assert t.zone == tersa.ZONE_FLOATING and t.nanos == 123456000


def test_naive_utc_option():
    d = dt.datetime(2025, 4, 16, 9, 23, 47)
    t = ts_of(tersa.dumps(d, option=tersa.OPT_NAIVE_UTC))
    assert t.zone == tersa.ZONE_UTC and t.seconds == 1744795427
    assert tersa.loads(tersa.dumps(d, option=tersa.OPT_NAIVE_UTC)) == d.replace(tzinfo=UTC)


def test_utc():
    d = dt.datetime(2025, 4, 16, 9, 23, 47, tzinfo=UTC)
    out = rt(d)
    assert out == d and out.tzinfo is UTC
    assert ts_of(tersa.dumps(d)) == tersa.Timestamp(1744795427, 0, tersa.ZONE_UTC)


@pytest.mark.parametrize("minutes", [-1439, -300, -1, 0, 1, 330, 345, 1439])
def test_offsets(minutes):
    # (timezone(timedelta(0)) is timezone.utc itself; a named zero offset is not.)
    tz = dt.timezone(dt.timedelta(minutes=minutes), "+00:00") if minutes == 0 else dt.timezone(dt.timedelta(minutes=minutes))
    d = dt.datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=tz)
    out = rt(d)
    assert out == d and out.utcoffset() == dt.timedelta(minutes=minutes)
    t = ts_of(tersa.dumps(d))
    assert t.zone == tersa.ZONE_OFFSET and t.offset == minutes
    # An offset of zero stays an offset (not UTC) through a round trip.
    assert ts_of(tersa.dumps(out)) == t


def test_zoneinfo():
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        tz = zoneinfo.ZoneInfo("Europe/Paris")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no tz database")
    d = dt.datetime(2025, 7, 1, 12, 0, tzinfo=tz)
    out = rt(d)
    assert out == d and out.utcoffset() == dt.timedelta(hours=2)


def test_offset_with_seconds_raises():
    tz = dt.timezone(dt.timedelta(minutes=5, seconds=30))
    with pytest.raises(tersa.EncodeError, match="whole number of minutes"):
        tersa.dumps(dt.datetime(2025, 1, 1, tzinfo=tz))


def test_extremes():
    for d in [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
              dt.datetime(1, 1, 1, tzinfo=UTC), dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
              dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(2000, 2, 29)]:
        assert rt(d) == d


def test_local_time_out_of_range():
    # 0001-01-01T00:30 at +01:00 is in year 0 in UTC: outside the Tersa range.
    d = dt.datetime(1, 1, 1, 0, 30, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    with pytest.raises(tersa.EncodeError):
        tersa.dumps(d)


def test_nanoseconds_decode_to_timestamp():
    t = tersa.Timestamp(1744795427, 123456789, tersa.ZONE_UTC)
    out = rt(t)
    assert type(out) is tersa.Timestamp and out == t
    assert out.isoformat() == "2025-04-16T09:23:47.123456789Z"
    with pytest.raises(ValueError):
        out.to_datetime()


def test_timestamp_with_whole_microseconds_decodes_to_datetime():
    t = tersa.Timestamp(1744795427, 5000, tersa.ZONE_OFFSET, -300)
    out = rt(t)
    assert isinstance(out, dt.datetime) and out == t.to_datetime()
    assert tersa.Timestamp.from_datetime(out) == t


def test_timestamp_option_always():
    d = dt.datetime(2025, 4, 16, 9, 23, 47, tzinfo=UTC)
    assert tersa.loads(tersa.dumps(d), option=tersa.OPT_TIMESTAMP) == tersa.Timestamp(1744795427)


def test_timestamp_validation():
    with pytest.raises(ValueError):
        tersa.Timestamp(0, 10**9)
    with pytest.raises(ValueError):
        tersa.Timestamp(0, 0, tersa.ZONE_OFFSET, 1440)
    with pytest.raises(ValueError):
        tersa.Timestamp(253402300800)
    with pytest.raises(ValueError):
        tersa.Timestamp(0, 0, tersa.ZONE_UTC, 5)


def test_timestamp_value_semantics():
    a = tersa.Timestamp(1, 2, tersa.ZONE_OFFSET, 60)
    b = tersa.Timestamp(1, 2, tersa.ZONE_OFFSET, 60)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != tersa.Timestamp(1, 2, tersa.ZONE_OFFSET, 61)
    with pytest.raises(AttributeError):
        a.seconds = 5
    import pickle

    assert pickle.loads(pickle.dumps(a)) == a
    assert "ZONE_OFFSET" in repr(a)


def test_timestamp_isoformat_and_datetime():
    t = tersa.Timestamp(0, 0, tersa.ZONE_OFFSET, -330)
    assert t.isoformat() == "1969-12-31T18:30:00-05:30"
    assert t.to_datetime() == dt.datetime(1970, 1, 1, tzinfo=UTC)
    assert tersa.Timestamp(86400 * 365, 0, tersa.ZONE_FLOATING).isoformat() == "1971-01-01T00:00:00"


def test_datetime_as_key():
    d = {dt.datetime(2025, 1, 1, tzinfo=UTC): 1, dt.datetime(2025, 1, 1): 2}
    out = rt(d)
    assert list(out.values()) == [1, 2] and list(out) == list(d)


def test_passthrough_datetime():
    d = dt.datetime(2025, 1, 1)
    with pytest.raises(tersa.EncodeError):
        tersa.dumps(d, option=tersa.OPT_PASSTHROUGH_DATETIME)
    assert tersa.loads(tersa.dumps(d, option=tersa.OPT_PASSTHROUGH_DATETIME, default=lambda o: o.isoformat())) == "2025-01-01T00:00:00"


def test_timestamp_strings_stay_strings():
    s = ["2025-04-16T09:23:47Z", "2025-04-16T09:23:47.123+05:30", "2025-04-16", "2025-04-16 09:23:47Z"]
    assert rt(s) == s and all(type(x) is str for x in rt(s))


def test_date_and_time_objects_pass_through_to_default():
    # date and time are well-known types (test_well_known.py); with
    # OPT_PASSTHROUGH_DATETIME they go to `default` as datetimes do.
    for v in (dt.date(2025, 1, 1), dt.time(9, 30)):
        with pytest.raises(tersa.EncodeError, match="date|time"):
            tersa.dumps(v, option=tersa.OPT_PASSTHROUGH_DATETIME)
        assert tersa.loads(tersa.dumps(v, option=tersa.OPT_PASSTHROUGH_DATETIME, default=str)) == str(v)
