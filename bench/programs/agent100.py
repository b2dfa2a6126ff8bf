"""Sales report: the kind of program an agent writes for a data question (100 lines)."""
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Dict, Iterable, List, Optional
import json
import re
import statistics

RAW = """order_id,date,region,product,qty,unit_price
1001,2024-01-03,north,widget,4,2.50
1002,2024-01-03,south,gadget,1,12.00
1003,2024-01-04,north,gizmo,10,0.99
1004,2024-01-05,east,widget,7,2.50
1005,2024-01-06,south,widget,3,2.45
1006,2024-01-06,west,gadget,2,11.50"""


class ParseError(Exception):
    """Raised when a line of the input cannot be understood."""


@dataclass(order=True)
class Order:
    day: date
    order_id: int
    region: str = field(compare=False)
    product: str = field(compare=False)
    qty: int = field(compare=False, default=0)
    unit_price: float = field(compare=False, default=0.0)

    @property
    def total(self) -> float:
        return round(self.qty * self.unit_price, 2)


def parse(text: str) -> List[Order]:
    lines = text.strip().splitlines()
    header = lines[0].split(",")
    orders = []
    for n, line in enumerate(lines[1:], start=2):
        row = dict(zip(header, line.split(",")))
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", row.get("date", "")):
            raise ParseError(f"line {n}: bad date {row.get('date')!r}")
        y, m, d = (int(p) for p in row["date"].split("-"))
        orders.append(Order(date(y, m, d), int(row["order_id"]), row["region"],
                            row["product"], int(row["qty"]), float(row["unit_price"])))
    return sorted(orders)


def by_region(orders: Iterable[Order]) -> Dict[str, float]:
    totals: Dict[str, float] = defaultdict(float)
    for o in orders:
        totals[o.region] += o.total
    return {k: round(v, 2) for k, v in sorted(totals.items())}


def best_day(orders: List[Order]) -> Optional[date]:
    per_day = Counter()
    for o in orders:
        per_day[o.day] += o.total
    return max(per_day, key=lambda d: (per_day[d], d)) if per_day else None


def weekly(orders: List[Order], start: date) -> List[float]:
    weeks = [0.0] * 2
    for o in orders:
        idx = (o.day - start) // timedelta(days=7)
        if 0 <= idx < len(weeks):
            weeks[idx] += o.total
    return [round(w, 2) for w in weeks]


def summary(orders: List[Order]) -> dict:
    totals = [o.total for o in orders]
    return {
        "orders": len(orders),
        "revenue": round(sum(totals), 2),
        "mean": round(statistics.mean(totals), 2),
        "median": statistics.median(totals),
        "top_products": Counter(o.product for o in orders).most_common(2),
        "regions": by_region(orders),
        "best_day": str(best_day(orders)),
        "weekly": weekly(orders, date(2024, 1, 1)),
    }


def main() -> int:
    try:
        orders = parse(RAW)
    except ParseError as e:
        print(f"error: {type(e).__name__}: {e}")
        return 1
    report = summary(orders)
    print(json.dumps(report, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
