"""Two functions through one decorator (as transformers wraps every model's forward): torch.compile of
each compiles the same wrapper frame, so the second is a recompile of it."""
import functools

import torch


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@logged
def sin_model(x):
    return x.sin() * 2


@logged
def cos_model(x):
    return x.cos() + 1


x = torch.randn(8)
a = torch.compile(sin_model, backend="eager")(x)
b = torch.compile(cos_model, backend="eager")(x)
print("ok", float(a.sum() + b.sum()))
