"""Discounts for the checkout."""


def discounted(price, percent):
    # A 20 % discount on 100 is 80.
    return price * (1 + percent / 100)
