"""A package of the bundle, imported by handler.py as `from greetings import greet`."""


def greet(name):
    return "Hello, " + name + "!"
