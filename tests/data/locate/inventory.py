"""A small inventory service: products, stock levels and a report.

Test data for lspmux's Locate engine. Keep it realistic: classes, decorators, properties,
two classes with a method of the same name, and a line with an emoji before code.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Iterable, Iterator

log = logging.getLogger(__name__)

BOX = "📦"  # the emoji makes UTF-16 and UTF-8 columns differ from code points
LOW_STOCK = 5


def traced(func: Callable[..., object]) -> Callable[..., object]:
    """Log every call of `func` at DEBUG."""

    @functools.wraps(func)
    def wrapper(*args: object, **kwargs: object) -> object:
        log.debug("call %s args=%r kwargs=%r", func.__name__, args, kwargs)
        result = func(*args, **kwargs)
        log.debug("done %s -> %r", func.__name__, result)
        return result

    return wrapper


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    price: Decimal
    tags: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.name} ({self.sku})"

    def describe(self) -> str:
        tags = ", ".join(self.tags) if self.tags else "untagged"
        return f"{BOX} {self.label}: {self.price} [{tags}]"


@dataclass
class StockLevel:
    product: Product
    quantity: int = 0
    reserved: int = 0

    @property
    def available(self) -> int:
        return max(self.quantity - self.reserved, 0)

    def describe(self) -> str:
        flag = " (low)" if self.available < LOW_STOCK else ""
        return f"{self.product.sku}: {self.available} available{flag}"

    def reserve(self, amount: int) -> bool:
        if amount <= 0:
            raise ValueError(f"cannot reserve {amount} items")
        if amount > self.available:
            return False
        self.reserved += amount
        return True


class OutOfStock(Exception):
    def __init__(self, sku: str, wanted: int, available: int) -> None:
        super().__init__(f"{sku}: wanted {wanted}, only {available} available")
        self.sku = sku
        self.wanted = wanted
        self.available = available


@dataclass
class Inventory:
    levels: dict[str, StockLevel] = field(default_factory=dict)
    history: list[tuple[str, int]] = field(default_factory=list)

    @classmethod
    def from_products(cls, products: Iterable[Product], quantity: int = 0) -> Inventory:
        inventory = cls()
        for product in products:
            inventory.levels[product.sku] = StockLevel(product, quantity)
        return inventory

    @staticmethod
    def normalize_sku(sku: str) -> str:
        return sku.strip().upper().replace(" ", "-")

    def __len__(self) -> int:
        return len(self.levels)

    def __iter__(self) -> Iterator[StockLevel]:
        return iter(sorted(self.levels.values(), key=lambda level: level.product.sku))

    def level(self, sku: str) -> StockLevel:
        key = self.normalize_sku(sku)
        try:
            return self.levels[key]
        except KeyError:
            raise KeyError(f"unknown product {key!r}") from None

    @traced
    def receive(self, sku: str, quantity: int) -> int:
        level = self.level(sku)
        level.quantity += quantity
        self.history.append((level.product.sku, quantity))
        return level.quantity

    @traced
    def ship(self, sku: str, quantity: int) -> int:
        level = self.level(sku)
        if quantity > level.available:
            raise OutOfStock(level.product.sku, quantity, level.available)
        level.quantity -= quantity
        self.history.append((level.product.sku, -quantity))
        return level.quantity

    def low_stock(self, threshold: int = LOW_STOCK) -> list[StockLevel]:
        return [level for level in self if level.available < threshold]

    def total_value(self) -> Decimal:
        total = Decimal(0)
        for level in self:
            total += level.product.price * level.quantity
        return total


class Report:
    """A plain-text report of an inventory."""

    title = "Inventory report"

    def __init__(self, inventory: Inventory, *, width: int = 60) -> None:
        self.inventory = inventory
        self.width = width

    @property
    def rule(self) -> str:
        return "-" * self.width

    def lines(self) -> Iterator[str]:
        yield self.title.center(self.width)
        yield self.rule
        for level in self.inventory:
            yield level.describe()
        yield self.rule
        yield f"{len(self.inventory)} products, total value {self.inventory.total_value()}"

    def render(self) -> str:
        return "\n".join(self.lines()) + "\n"


class CsvReport(Report):
    title = "sku,name,available,price"

    def lines(self) -> Iterator[str]:
        yield self.title
        for level in self.inventory:
            product = level.product
            yield f"{product.sku},{product.name},{level.available},{product.price}"


def demo_products() -> list[Product]:
    return [
        Product("A-100", "Anvil", Decimal("49.90"), ("heavy", "iron")),
        Product("B-200", "Bucket", Decimal("7.50")),
        Product("C-300", "Crowbar", Decimal("19.00"), ("iron",)),
        Product("D-400", "Duct tape", Decimal("3.25"), ("sticky",)),
    ]


def main(argv: list[str] | None = None) -> int:
    inventory = Inventory.from_products(demo_products(), quantity=10)
    inventory.receive("a-100", 5)
    inventory.ship("B-200", 7)
    try:
        inventory.ship("C-300", 50)
    except OutOfStock as exc:
        log.warning("%s", exc)
    report = CsvReport(inventory) if argv and "--csv" in argv else Report(inventory)
    print(report.render(), end="")
    for level in inventory.low_stock():
        print(f"{BOX} reorder {level.product.name}: {level.available} left")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
