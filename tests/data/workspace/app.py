import os


class Greeter:
    """Says hello."""

    def __init__(self, name: str) -> None:
        self.name = name

    def greet(self) -> str:
        message = f"Hello, {self.name}!"
        return message


def main() -> None:
    greeter = Greeter("world")
    print(greeter.greet())
    undefined_name
