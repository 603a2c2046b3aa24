"""Grow a class one method per notebook cell, so each method gets its own answer cell."""


def add_to_class(cls):
    """Decorator: attach the decorated function to ``cls`` as a method of the same name.

    >>> class Greeter: ...
    >>> @add_to_class(Greeter)
    ... def hello(self):
    ...     return "hello"
    >>> Greeter().hello()
    'hello'
    """

    def attach(function):
        setattr(cls, function.__name__, function)
        return function

    return attach
