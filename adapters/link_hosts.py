"""Whether a link's label reads as an address of another host than the one it goes to.

Model text is untrusted: ``[https://accounts.example.com/reset](https://evil.example/steal)`` shows
one address and opens another. Every renderer asks ``misleading_label`` before it links a label
(``markdown.Renderer``, Feishu's ``links.safe_links``); such a link is shown with its target as
its label, so what a person reads is where the click goes.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

# A label that is one address: a URL with a scheme, a mail address or a bare host name
# ("accounts.example.com", "www.x.y/path"), maybe with a port and a path; the host is named.
_ADDRESS = re.compile(
    r"(?:[a-z][a-z0-9+.-]*://|mailto:)?(?:[^\s/@]*@)?"
    r"(?P<host>(?:[\w-]+\.)+[^\W\d_]{2,}|\[[0-9a-f:.]+\]|\d{1,3}(?:\.\d{1,3}){3})\.?"
    r"(?::\d{1,5})?(?:[/?#]\S*)?",
    re.IGNORECASE,
)


#: Country domains that are first of all file extensions: a bare ``setup.py`` or ``README.md`` (one
#: dot, no scheme) names a file, as a label of the link to it does, not a host.
FILE_LIKE = frozenset("py md rs sh pl pm cs cc so ps ml mk hs jl tf gd".split())


def _file_name(label: str, host: str) -> bool:
    """True for a label that is only ``name.ext`` with ``ext`` in ``FILE_LIKE``."""
    name, _, ext = host.lower().rpartition(".")
    return label == host and "." not in name and ext in FILE_LIKE


def _host(host: str) -> str:
    """``host`` compared as DNS does: lower case, no trailing dot, international names as
    punycode, without a leading ``www.``."""
    host = host.strip("[]").rstrip(".").lower()
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        pass
    return host.removeprefix("www.")


#: The dots IDNA reads as "." in a host name (UTS #46): "accounts。example。com" names
#: accounts.example.com.
_DOTS = str.maketrans("\u3002\uff0e\uff61", "...")


def _as_read(label: str) -> str:
    """``label`` as a reader reads it: without the characters that show nothing (format characters:
    a zero-width space, a soft hyphen…), every dot a host name may be written with a "."."""
    return "".join(char for char in label if unicodedata.category(char) != "Cf").translate(_DOTS)


def misleading_label(label: str, href: str) -> bool:
    """True when ``label`` is an address (a URL, a mail address or a bare host name) whose host is
    neither ``href``'s nor one ``href``'s host is a subdomain of (``label`` as read: ``_as_read``)."""
    written = _as_read(label).strip().strip("<>")
    shown = _ADDRESS.fullmatch(written)
    if shown is None or _file_name(written, shown.group("host")):
        return False
    try:
        target = urlsplit(href)
        goes = target.hostname or ""
    except ValueError:
        return True
    if target.scheme.lower() == "mailto":
        goes = target.path.rpartition("@")[2]
    named, goes = _host(shown.group("host")), _host(goes)
    return not (goes == named or goes.endswith(f".{named}"))
