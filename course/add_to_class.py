"""Grow a class one method per notebook cell, so each method gets its own answer cell.

Running a class's own cell again makes a *new* class, without the methods that cells
below it added to the old one. The decorator remembers what it added to which class, so
the notebook's tests can say exactly that (see :func:`lost_methods`) instead of failing
with an ``AttributeError`` from deep inside a check.
"""

# (module, qualified name) of a class -> the method names add_to_class gave it, in order
_added = {}


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
        added = _added.setdefault(_key(cls), [])
        if function.__name__ not in added:
            added.append(function.__name__)
        return function

    return attach


def lost_methods(cls):
    """Methods that ``add_to_class`` gave an earlier class of the same name and module
    which ``cls`` lacks: non-empty when the class's cell was run again."""
    return [name for name in _added.get(_key(cls), []) if not hasattr(cls, name)]


def _key(cls):
    return getattr(cls, "__module__", None), getattr(cls, "__qualname__", None)
