"""Credentials out of what ``magi-tui report`` writes (issue 32): one redactor for every byte of a bundle.

A bug report is meant to be pasted into a public issue, and the program's command line, its output, its
environment and the files torch wrote beside it can hold a key. :class:`Redactor` rewrites, wherever it
finds one, a value that looks like a credential to ``[redacted]`` and counts what it replaced by kind
(:meth:`Redactor.summary` is the line REPORT.md shows: kinds and counts, never a value):

* **secret option value** -- the value of an option named like a credential: ``--api-key X``,
  ``--token=X``, ``-password X``. A name counts when its last word (``-``/``_``/``.``/camelCase
  separated) is one of :data:`SECRET_WORDS` (``--hf-token``, ``--apiKey``, ``--db-password``); so
  ``--max-tokens 128``, ``--tokenizer gpt2``, ``--key-file k.pem`` and ``--num-key-value-heads 8`` pass.
* **secret setting value** -- the same names in ``NAME=value`` (``password=…``, ``HF_TOKEN=…``, a URL's
  ``?token=…``), ``NAME: value`` at a line's start or with the name quoted (YAML, JSON), Python's
  ``os.environ["API_KEY"] = "…"``, and ``Authorization: Bearer …``.
* **URL credentials** -- the userinfo of ``scheme://user:password@host`` (a user alone is kept unless it
  looks like a token: ``https://ghp_…@github.com``).
* **known token** -- well-known prefixes: Hugging Face ``hf_``, GitHub ``ghp_``/``gho_``/``github_pat_``,
  OpenAI/Anthropic ``sk-``, Stripe ``sk_live_``, AWS ``AKIA``/``ASIA``, Google ``AIza``, Slack ``xox?-``,
  GitLab ``glpat-``, npm, PyPI, JSON Web Tokens; and PEM ``PRIVATE KEY`` blocks.
* **random-looking value** -- a long run of letters and digits that reads like random base64 (upper,
  lower and digits, mixed at nearly every character, high entropy); on a command line or in an
  environment value also a long hex string. Prose, identifiers, paths, numbers and git hashes in text
  are left alone.

Values are never redacted when they are harmless whatever their name: numbers, booleans, ``None``,
paths, ``$VAR`` placeholders, code expressions (``os.environ["X"]``, ``get_key()``), an empty value.
The home folder is written as ``~`` (counted apart: it is not a secret). Environment variables are
listed by name only (:meth:`Redactor.environment`), with values only for :data:`ENV_ALLOWED` (torch,
Triton, CUDA, NCCL and OpenMP settings), and those values pass through the redactor too.

Pure and torch-free: strings in, strings out; :meth:`Redactor.json` walks a JSON value (a ``command``
list as a command line, an ``env`` object as names).
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from magi_format.lazyre import lazy_re

__all__ = ["MARK", "Redactor", "SECRET_WORDS", "ENV_ALLOWED", "secret_name", "looks_random"]

MARK = "[redacted]"

# the kinds, in the words REPORT.md uses (plural forms by adding "s")
OPTION = "secret option value"
SETTING = "secret setting value"
URL = "URL credential"
KNOWN = "known token"
KEYBLOCK = "private key block"
RANDOM = "random-looking value"
_ORDER = (OPTION, SETTING, URL, KNOWN, KEYBLOCK, RANDOM)

#: a name is a credential's when its last word is one of these (or ``key`` after one of :data:`_KEY_OWNERS`)
SECRET_WORDS = frozenset({
    "token", "secret", "password", "passwd", "pwd", "passphrase", "auth", "authorization", "credential",
    "credentials", "creds", "cred", "cookie", "bearer", "apikey", "apitoken", "authtoken", "accesstoken",
    "secretkey", "accesskey", "privatekey", "sessiontoken", "clientsecret", "pat",
})
_PASSWORDS = frozenset({"password", "passwd", "pwd", "passphrase", "secret", "clientsecret"})
_KEY_OWNERS = frozenset({"api", "access", "secret", "private", "auth", "client", "signing", "encryption",
                         "license", "master", "session", "ssh", "account", "service", "app", "hf", "openai",
                         "wandb", "aws", "gcp", "azure", "storage", "subscription", "admin", "user", "bot"})

#: environment variables whose values a report shows (the rest: names only)
ENV_ALLOWED = lazy_re(
    r"^(?:TORCH|TORCHINDUCTOR|TORCHDYNAMO|TORCHELASTIC|TORCHINDUCTOR|INDUCTOR|TRITON|PYTORCH|CUDA|CUDNN|"
    r"CUBLAS|CUBLASLT|NCCL|NVIDIA|ROCM|HIP|HSA|OMP|MKL|KMP|MAGI)_[A-Z0-9_]*$")

_CAMEL = lazy_re(r"(?<=[a-z0-9])(?=[A-Z])")
_WORDS = lazy_re(r"[-_.\s]+")
_NUMBER = lazy_re(r"[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?%?")
_PLACEHOLDER = lazy_re(r"\$\{?\w+\}?|<[^<>]*>|\*+|x{3,}|X{3,}|\.\.\.|…|\{\{.*\}\}|%\(?\w*\)?s")
_WORDLIKE = lazy_re(r"[A-Z]?[a-z]{2,}")
_TYPE = lazy_re(r"(?:[A-Za-z_][\w.]*\.)?(?:[A-Z]\w*|str|int|float|bool|bytes|dict|list|tuple|set|object)")
_HEX = lazy_re(r"[0-9a-fA-F]{32,}")
_HARMLESS_WORDS = frozenset({"true", "false", "none", "null", "yes", "no", "on", "off", "auto", "default",
                             "required", "optional", "str", "string", "int", "bool", "env", "file", "lambda", "self"})

_KEY_BLOCK = lazy_re(r"(-----BEGIN [A-Z ]*PRIVATE KEY-----)[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----)")
_URL = lazy_re(r"(?<![\w+.\-])([a-zA-Z][a-zA-Z0-9+.\-]{1,20}://)([^\s/@:?#\[\]\"'<>`]*)"
               r"(?::([^\s/@?#\"'<>`]*))?@(?=[\w\[])")
_KNOWN = lazy_re(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"hf_[A-Za-z0-9]{30,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"
    r"|sk-(?:proj-|ant-|live-|test-|svcacct-)?[A-Za-z0-9_\-]{20,}"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|npm_[A-Za-z0-9]{36}"
    r"|pypi-[A-Za-z0-9_\-]{50,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r")(?![A-Za-z0-9_\-])")
_SECRET_END = (r"(?:token|secret|passw(?:or)?d|pwd|passphrase|auth|authorization|credentials?|creds?|cookie|"
               r"bearer|key|pat)")
#: NAME<sep>VALUE where NAME ends with a credential's word; checked word by word in the callback
_SETTING = lazy_re(
    r"(?<![\w.\-/])(?P<qn>[\"']?)(?P<name>-{0,2}(?:[A-Za-z_][\w.\-]{0,80}?)?" + _SECRET_END + r")(?P=qn)(?:(?<=[\"'])\])?"
    r"(?P<sep>[ \t]*(?:=(?!=)|:)[ \t]*|[ \t]+)"
    r"(?P<val>(?i:bearer|basic|token|digest)[ \t]+[^\s\"',;&]+|\"[^\"\n]{0,4096}\"|'[^'\n]{0,4096}'"
    r"|[^\s\"',;&)}\]>]{1,4096})",
    re.IGNORECASE)
_RUN = lazy_re(r"(?<![\w+/=.\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?![\w+/=.\-])")


def _words(name: str) -> list[str]:
    return [w for w in _WORDS.split(_CAMEL.sub("_", name.lstrip("-"))) if w]


def secret_name(name: str) -> int:
    """3 when ``name`` (an option, a setting, a variable) names a password (even a number is one), 2 when it
    names another credential, 1 when it may (``…_key`` after an ordinary word: ``--cache-key``), 0 when it
    does not."""
    words = [w.lower() for w in _words(name)]
    if not words:
        return 0
    last = words[-1]
    if last in _PASSWORDS:
        return 3
    if last in SECRET_WORDS:
        return 2 if last != "pat" or len(words) > 1 else 0
    if last == "key":  # a bare ``key`` is a dict's or a sort's as often as a credential's
        return 2 if len(words) > 1 and words[-2] in _KEY_OWNERS else 1
    return 0


def harmless(value: str, *, quoted: bool = False, level: int = 2) -> bool:
    """A value no name makes secret: a number, a boolean, a path, a placeholder, code, nothing (under a
    password's name, ``level`` 3, only nothing, a placeholder or code)."""
    s = value.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s, quoted = s[1:-1].strip(), True
    if not s or s.startswith("[redacted") or _PLACEHOLDER.fullmatch(s) or s.lower() in ("none", "null"):
        return True
    if level < 3 and (s.lower() in _HARMLESS_WORDS or _NUMBER.fullmatch(s)):
        return True
    if s.startswith(("/", "./", "../", "~/")) and " " not in s:
        return True
    return not quoted and any(c in s for c in "([{")


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _kind(c: str) -> int:
    return 0 if c.isdigit() else 1 if c.islower() else 2 if c.isupper() else 3


def looks_random(s: str, *, hex_too: bool = False) -> bool:
    """Whether ``s`` reads like a random key: 24+ characters of one base64 alphabet (``+/`` or ``-_``, not
    both: ``org/Model-Name`` is a name) with upper, lower and digits, changing kind at nearly every
    character and mostly not made of words (CamelCase and snake_case names are), or, with ``hex_too``, 32+
    hex digits with letters and digits. Calibrated on ~32,000 long identifiers of torch and transformers
    (10 taken for keys) and random keys of 24-40 characters (4 % missed)."""
    s = s.rstrip("=")
    if hex_too and _HEX.fullmatch(s) and any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
        return True
    if len(s) < 24 or s[0] in "/.~":
        return False
    if not (any(c.isdigit() for c in s) and any(c.islower() for c in s) and any(c.isupper() for c in s)):
        return False
    if sum(c in "_./+-" for c in s) > 0.15 * len(s) or (any(c in s for c in "/+")
                                                        and any(c in s for c in "-_.")):
        return False
    changes = sum(_kind(a) != _kind(b) for a, b in zip(s, s[1:]))
    worded = sum(len(w) for w in _WORDLIKE.findall(s))  # Title and lower words: a name's parts
    return changes >= 0.35 * (len(s) - 1) and worded < 0.6 * len(s) and _entropy(s) >= 3.5


class Redactor:
    """Rewrites credentials to :data:`MARK` and counts them (``counts``: kind -> how many); ``home``: the
    folder written as ``~`` (default: this user's)."""

    def __init__(self, home: str | None = None) -> None:
        self.counts: Counter[str] = Counter()
        self.env_withheld = 0
        self.home_paths = 0
        h = os.path.expanduser("~") if home is None else home
        homes = {h.rstrip("/"), os.path.realpath(h).rstrip("/")} if h and h not in ("~", "/") else set()
        homes = {x for x in homes if len(x) > 1}
        self._home = (re.compile(r"(?<![\w.\-/~])(?:" + "|".join(re.escape(x) for x in
                                                                  sorted(homes, key=len, reverse=True))
                                 + r")(?=/|\\|$|[\s\"'`:;,)\]}])", re.MULTILINE) if homes else None)

    # -- text ----------------------------------------------------------------------------------------------
    def text(self, text: str, *, hex_too: bool = False) -> str:
        """``text`` with every credential it shows replaced (``hex_too``: a command line's or an environment
        value's long hex strings too), and the home folder written as ``~``."""
        if not text:
            return text
        s = _KEY_BLOCK.sub(self._key_block, text) if "PRIVATE KEY-----" in text else text
        if "@" in s:
            s = _URL.sub(self._url, s)
        s = _KNOWN.sub(self._known, s)
        s = _SETTING.sub(self._setting, s)
        s = _RUN.sub(lambda m: self._random(m, hex_too), s)
        if hex_too:
            s = re.sub(r"(?<![\w.\-/])[0-9a-fA-F]{32,}(?![\w.\-])", lambda m: self._random(m, True), s)
        return self._home_sub(s)

    def _home_sub(self, s: str) -> str:
        if self._home is None:
            return s
        s, n = self._home.subn("~", s)
        self.home_paths += n
        return s

    def _key_block(self, m: re.Match[str]) -> str:
        if m.group(0)[len(m.group(1)):-len(m.group(2))].strip() == MARK:
            return m.group(0)
        self.counts[KEYBLOCK] += 1
        return f"{m.group(1)}\n{MARK}\n{m.group(2)}"

    def _url(self, m: re.Match[str]) -> str:
        scheme, user, password = m.group(1), m.group(2), m.group(3)
        if password or (user and (looks_random(user, hex_too=True) or _KNOWN.fullmatch(user))):
            self.counts[URL] += 1
            return f"{scheme}{MARK}@"
        return m.group(0)

    def _known(self, m: re.Match[str]) -> str:
        token = m.group(0)
        if token.startswith("hf_") and token[3:].islower():  # an identifier (hf_hub_download…), not a token
            return token
        self.counts[KNOWN] += 1
        return MARK

    def _setting(self, m: re.Match[str]) -> str:
        name, sep, val = m.group("name"), m.group("sep"), m.group("val")
        dashed = name.startswith("-")
        if not sep.strip():  # NAME VALUE: only an option takes its value after a space
            if not dashed:
                return m.group(0)
        elif ":" in sep and not dashed and not m.group("qn"):  # NAME: VALUE at a line's start only (YAML)
            before = m.string[m.string.rfind("\n", 0, m.start()) + 1:m.start()]
            after = m.string[m.end():m.end() + 3].lstrip(" \t")
            if before.strip(" \t-") or _TYPE.fullmatch(val) or after[:1] in (",", ")", "="):
                return m.group(0)  # prose, or Python's ``name: Type`` annotation
        level = secret_name(name)
        if level == 0 or harmless(val, level=level) or (level == 1 and not looks_random(val.strip("\"'"), hex_too=True)):
            return m.group(0)
        if val.startswith(("\"", "'")):
            new = val[0] + MARK + val[0]
        elif " " in val or "\t" in val:  # Bearer <token>
            new = val.split(None, 1)[0] + " " + MARK
        else:
            new = MARK
        self.counts[OPTION if dashed else SETTING] += 1
        return m.group(0)[:m.start("val") - m.start()] + new

    def _random(self, m: re.Match[str], hex_too: bool) -> str:
        if not looks_random(m.group(0), hex_too=hex_too):
            return m.group(0)
        self.counts[RANDOM] += 1
        return MARK

    # -- structures ----------------------------------------------------------------------------------------
    def argv(self, args: Iterable[str]) -> list[str]:
        """A command line, word by word: an option named like a credential has its value (the next word, or
        after ``=``) replaced; every word then goes through :meth:`text` (hex strings included)."""
        out: list[str] = []
        pending = 0
        for a in (str(x) for x in args):
            if pending:
                level, pending = pending, 0
                if not a.startswith("-") and not harmless(a, level=level) and (level >= 2
                                                                                or looks_random(a, hex_too=True)):
                    self.counts[OPTION] += 1
                    out.append(MARK)
                    continue
            if a.startswith("-") and "=" not in a and len(a) > 1 and not _NUMBER.fullmatch(a):
                pending = secret_name(a)
            out.append(self.text(a, hex_too=True))
        return out

    def environment(self, env: Mapping[str, str]) -> tuple[list[tuple[str, str]], list[str]]:
        """``(name, value)`` of the variables :data:`ENV_ALLOWED` shows (values redacted), and the names of
        the others (values withheld, counted in ``env_withheld``); both sorted."""
        shown: list[tuple[str, str]] = []
        hidden: list[str] = []
        for name in sorted(env):
            if ENV_ALLOWED.match(name) and not secret_name(name):
                shown.append((name, self.text(str(env[name]), hex_too=True)))
            else:
                hidden.append(name)
        self.env_withheld += len(hidden)
        return shown, hidden

    def json(self, value: Any, key: str | None = None) -> Any:
        """A JSON value with every string redacted: a ``command``/``argv`` list as a command line, an
        ``env``/``environ``/``environment`` object as names (allowed values kept, redacted), a string
        under a credential's name replaced whole."""
        k = (key or "").lower()
        if isinstance(value, str):
            level = secret_name(key) if key is not None else 0
            if level >= 2 and not harmless(value, quoted=True, level=level):
                self.counts[SETTING] += 1
                return MARK
            return self.text(value)
        if isinstance(value, list):
            if k in ("command", "argv", "args", "cmd", "cmdline") and all(isinstance(x, str) for x in value):
                return self.argv(value)
            return [self.json(x) for x in value]
        if isinstance(value, dict):
            if k in ("env", "environ", "environment") and all(isinstance(x, str) for x in value.values()):
                shown, hidden = self.environment(value)
                return {**dict(shown), **{n: MARK for n in hidden}}
            return {str(n): self.json(x, str(n)) for n, x in value.items()}
        return value

    def bytes(self, data: bytes) -> bytes:
        """A copied file's bytes through :meth:`text` (UTF-8; other bytes kept as they are)."""
        return self.text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    # -- what was done ---------------------------------------------------------------------------------------
    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str:
        """One line: what was redacted, by kind and count, and what was withheld (never a value)."""
        parts = [f"{self.counts[k]} {k}{'s' if self.counts[k] != 1 else ''}" for k in _ORDER if self.counts[k]]
        head = (f"Replaced by {MARK}: " + ", ".join(parts) + "." if parts
                else "Nothing that looks like a credential was found (none redacted).")
        tail = []
        if self.env_withheld:
            tail.append(f"{self.env_withheld} environment variable(s) listed by name only")
        if self.home_paths:
            tail.append(f"the home folder written as ~ ({self.home_paths} place(s))")
        if not tail:
            return head
        rest = "; ".join(tail)
        return f"{head} {rest[0].upper()}{rest[1:]}."
