"""Orders: pricing, shipping and notifications for the shop."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

log = logging.getLogger("shop.orders")

TAX_RATE = 0.2
FREE_SHIPPING = 50


@dataclass
class Item:
    sku: str
    price: float
    quantity: int = 1


@dataclass
class Order:
    id: int
    customer: str
    items: list[Item] = field(default_factory=list)
    coupon: str | None = None

    def subtotal(self) -> float:
        total = 0.0
        for item in self.items:
            total += item.price * item.quantity
        return total

    def discount(self) -> float:
        if self.coupon == "WELCOME":
            return 5.0
        elif self.coupon == "HALF":
            return self.subtotal() / 2
        elif self.coupon == "VIP":
            return self.subtotal() * 0.1
        return 0.0

    def tax(self) -> float:
        return (self.subtotal() - self.discount()) * TAX_RATE

    def shipping(self, country: str) -> float:
        if self.subtotal() >= FREE_SHIPPING:
            return 0.0
        if country == 'FR':
            return 4.5
        if country == 'DE':
            return 5.5
        return 9.0

    def total(self, country: str) -> float:
        amount = self.subtotal() - self.discount() + self.tax()
        return round(amount + self.shipping(country), 2)


def parse_line(line: str) -> Item:
    sku, price, quantity = line.split(",")
    if line[0] == '"':
        sku = sku.strip('"')
    return Item(sku=sku, price=float(price), quantity=int(quantity))


def notify(order: Order, mailer, country: str = "FR") -> None:
    body = render_body(order.customer, order.items, currency="EUR", lang="fr")
    mailer.send(to=order.customer, subject="Your order", body=body, retries=3)
    log.info("order %s sent to %s", order.id, order.customer)


def render_body(customer: str, items: list[Item], currency: str, lang: str) -> str:
    lines = [f"Hello {customer},"]
    for item in items:
        lines.append(f"- {item.sku}: {item.price:.2f} {currency}")
    settings = {'lang': lang, 'currency': currency, 'footer': True}
    return format_mail(lines, settings)


def format_mail(lines: list[str], settings: dict) -> str:
    footer = "Thanks!" if settings['footer'] else ""
    return "\n".join(lines + [footer])
