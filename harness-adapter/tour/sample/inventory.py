"""A tiny inventory: the sample project of `cc-harness tour`."""

import warnings


def total_value(stock):
    total = 0.0
    for name, (count, price) in stock.items():
        total += count * price
    return total


def restock(stock, name, count):
    if count < 0:
        warnings.warn("cannot restock a negative count")
        return stock
    held, price = stock.get(name, (0, 0.0))
    stock[name] = (held + count, price)
    return stock


def cheapest(stock):
    if not stock:
        warnings.warn("empty stock")
        return None
    return min(stock, key=lambda name: stock[name][1])


if __name__ == "__main__":
    shelf = {"apple": (3, 0.5), "pear": (2, 0.75), "plum": (10, 0.2)}
    restock(shelf, "apple", 2)
    print(f"total value: {total_value(shelf):.2f}")
    print(f"cheapest: {cheapest(shelf)}")
