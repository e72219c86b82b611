"""Reading a git configuration file as git 2.39 does, and naming the keys that run programs.

The parser follows git's own (``config.c``: ``git_parse_source``, ``get_base_var``,
``get_value``, ``parse_value``) byte for byte, because a reader that disagrees with
git about where a value ends could be shown a harmless key where git sees
``diff.x.textconv``. What git would reject is rejected here too.
"""

from __future__ import annotations

_BOM = b"\xef\xbb\xbf"
_SPACE = frozenset(b" \t\n\r")
"""git's own isspace: no vertical tab, no form feed."""
_ESCAPES = {ord("t"): ord("\t"), ord("b"): ord("\b"), ord("n"): ord("\n")}
_ESCAPES.update({ord("\\"): ord("\\"), ord('"'): ord('"')})
_NEWLINE = ord("\n")

RUN_KEYS = frozenset({
    "fsmonitor", "pager", "sshcommand", "hookspath", "editor", "askpass", "gitproxy",
    "worktree", "attributesfile", "alternaterefscommand", "external", "textconv",
    "command", "cmd", "clean", "smudge", "process", "driver", "program",
    "defaultkeycommand", "helper", "uploadpack", "receivepack", "packobjectshook", "path",
})  # fmt: skip
"""Last parts of key names that hold a program to run or a path git would read, in any
section (``core.fsmonitor``, ``diff.X.textconv``, ``filter.X.clean``, ``gpg.program``,
``include.path``, ``mergetool.X.cmd``…)."""

RUN_SECTIONS = frozenset({"include", "includeif", "pager", "trace2"})
"""Sections refused whatever the key: other files, per-command pagers, trace output files."""


class ConfigSyntaxError(ValueError):
    """The file is not configuration git would read."""


def config_entries(data: bytes) -> list[tuple[str, str | None]]:
    """``(name, value)`` for each entry, names as git spells them (``diff.x.textconv``).

    A key with no ``=`` has the value ``None`` (git's boolean true). Raises
    ``ConfigSyntaxError`` where git would stop with "bad config line".
    """
    return _Parser(data).entries()


def executing_key(name: str, value: str | None) -> bool:
    """Whether ``name = value`` can make git run a program or read another file."""
    section, _, rest = name.partition(".")
    key = rest.rpartition(".")[2]
    if section in RUN_SECTIONS or key in RUN_KEYS:
        return True
    # A shell command: alias.x = !cmd, submodule.x.update = !cmd.
    return section in ("alias", "submodule") and value is not None and "!" in value


class _Parser:
    def __init__(self, data: bytes) -> None:
        if data.startswith(_BOM):
            data = data[len(_BOM) :]
        elif data[:1] == _BOM[:1]:
            raise ConfigSyntaxError("a partial byte-order mark")  # git refuses it too
        self.data = data
        self.at = 0
        self.eof = False

    def next(self) -> int:
        """``get_next_char``: CR LF reads as LF; the end reads as LF with ``eof`` set."""
        if self.at >= len(self.data):
            self.eof = True
            return _NEWLINE
        c = self.data[self.at]
        self.at += 1
        if c == ord("\r") and self.data[self.at : self.at + 1] == b"\n":
            self.at += 1
            return _NEWLINE
        return c

    def entries(self) -> list[tuple[str, str | None]]:
        found: list[tuple[str, str | None]] = []
        base = b""
        comment = False
        while True:
            c = self.next()
            if c == _NEWLINE:
                if self.eof:
                    return found
                comment = False
                continue
            if comment or c in _SPACE:
                continue
            if c in b"#;":
                comment = True
                continue
            if c == ord("["):
                base = self._section()
                continue
            if not chr(c).isascii() or not chr(c).isalpha():
                raise ConfigSyntaxError("a line that is neither a section nor a key")
            name, value = self._entry(base + bytes([c]).lower())
            found.append((_text(name), None if value is None else _text(value)))

    def _section(self) -> bytes:
        """``get_base_var``: ``[name]``, ``[name "sub"]`` or the old ``[name.sub]``."""
        name = bytearray()
        while True:
            c = self.next()
            if self.eof:
                raise ConfigSyntaxError("an unfinished section header")
            if c == ord("]"):
                break
            if c in _SPACE:
                name += b"." + self._subsection(c)
                break
            if not _keychar(c) and c != ord("."):
                raise ConfigSyntaxError("a bad section name")
            name.append(c | 0x20 if ord("A") <= c <= ord("Z") else c)
        if not name:
            raise ConfigSyntaxError("an empty section name")
        return bytes(name) + b"."

    def _subsection(self, c: int) -> bytes:
        """``get_extended_base_var``: the quoted part, a backslash escaping any character."""
        while c in _SPACE:
            if c == _NEWLINE:
                raise ConfigSyntaxError("an unfinished section header")
            c = self.next()
        if c != ord('"'):
            raise ConfigSyntaxError("a subsection that is not quoted")
        sub = bytearray()
        while True:
            c = self.next()
            if c == _NEWLINE:
                raise ConfigSyntaxError("an unfinished section header")
            if c == ord('"'):
                break
            if c == ord("\\"):
                c = self.next()
                if c == _NEWLINE:
                    raise ConfigSyntaxError("an unfinished section header")
            sub.append(c)
        if self.next() != ord("]"):
            raise ConfigSyntaxError("a subsection not closed by ]")
        return bytes(sub)

    def _entry(self, name: bytes) -> tuple[bytes, bytes | None]:
        """``get_value``: the rest of the key's name, then ``= value`` or nothing."""
        key = bytearray(name)
        while True:
            c = self.next()
            if self.eof or not _keychar(c):
                break
            key.append(c | 0x20 if ord("A") <= c <= ord("Z") else c)
        while c in b" \t":
            c = self.next()
        if c == _NEWLINE:
            return bytes(key), None
        if c != ord("="):
            raise ConfigSyntaxError("a key not followed by =")
        return bytes(key), self._value()

    def _value(self) -> bytes:
        """``parse_value``: quotes, escapes, comments and backslash-newline joins."""
        value = bytearray()
        quote = comment = False
        space = 0
        while True:
            c = self.next()
            if c == _NEWLINE:
                if quote:
                    raise ConfigSyntaxError("an unclosed quote")
                return bytes(value)
            if comment:
                continue
            if c in _SPACE and not quote:
                space += 1 if value else 0
                continue
            if not quote and c in b";#":
                comment = True
                continue
            value += b" " * space
            space = 0
            if c == ord("\\"):
                c = self.next()
                if c == _NEWLINE:
                    continue
                if c not in _ESCAPES:
                    raise ConfigSyntaxError("an unknown escape in a value")
                value.append(_ESCAPES[c])
            elif c == ord('"'):
                quote = not quote
            else:
                value.append(c)


def _keychar(c: int) -> bool:
    return chr(c).isascii() and (chr(c).isalnum() or c == ord("-"))


def _text(raw: bytes) -> str:
    """As git's C strings see it: cut at the first NUL."""
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")
