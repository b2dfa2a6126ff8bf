"""datetime arithmetic on fixed dates"""
from datetime import date, datetime, timedelta, timezone

start = date(2024, 1, 31)
print(start + timedelta(days=30), (date(2024, 12, 25) - start).days)
print(start.isoformat(), start.weekday(), start.strftime("%d %b %Y"))
dt = datetime(2024, 3, 10, 14, 30, tzinfo=timezone.utc)
print(dt.isoformat(), (dt + timedelta(hours=12)).date())
print(datetime.fromisoformat("2023-06-01T08:00:00") < datetime(2023, 6, 1, 9))
days = [start + timedelta(days=7 * i) for i in range(4)]
print([d.month for d in days], date(2024, 2, 29).replace(year=2028))
