"""nbgitpuller links: one click on a JupyterHub clones the student edition and opens a lesson.

nbgitpuller (https://nbgitpuller.readthedocs.io, installed on the hub) serves
``{hub}/hub/user-redirect/git-pull?repo=...&urlpath=...&branch=...``: the first click
clones ``repo`` into the student's home folder, later ones pull the instructor's changes
and merge them without overwriting the student's, and then the browser goes to
``urlpath``, relative to the student's server: ``lab/tree/<folder>/<file>`` in JupyterLab,
``tree/<folder>/<file>`` in the classic notebook, where ``<folder>`` is the last part of
``repo``, the folder nbgitpuller clones into.

Only the standard library is imported here: the command line checks these options before
it loads anything heavy.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

DEFAULT_BRANCH = "main"
# what urlpath starts with for each interface, as nbgitpuller's link generator writes it
INTERFACES = {"lab": "lab/tree", "notebook": "tree"}
# characters git refuses in a ref name (git check-ref-format), whitespace and controls too
_NOT_IN_A_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")
# JupyterHub's own routes, which come after the hub's address: a link built on one fails
_HUB_ROUTES = {"hub", "user", "services"}


class BadHubOption(ValueError):
    """A hub option cannot make working links; the message is the one-line reason."""


def checked_hub_url(hub_url):
    """The hub's address without a trailing slash; BadHubOption unless it is an http(s)
    address with a host and neither query nor fragment (a base path, /jupyter, is fine)."""
    example = "give the address students log in at, like https://hub.example.edu"
    if not hub_url or not hub_url.strip():
        raise BadHubOption(f"--hub-url is empty: {example}")
    if any(character.isspace() for character in hub_url):
        raise BadHubOption(f"--hub-url {hub_url!r} holds a space: {example}")
    parts = urlsplit(hub_url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise BadHubOption(f"--hub-url {hub_url!r} is not an http(s) address with a host: "
                           f"{example}")
    try:
        parts.port  # urlsplit checks the port only when asked for it
    except ValueError:
        raise BadHubOption(f"--hub-url {hub_url!r} has a port that is not a number from 0 "
                           f"to 65535: {example}") from None
    if "?" in hub_url or "#" in hub_url:
        raise BadHubOption(f"--hub-url {hub_url!r} has a query or fragment (? or #), which "
                           f"the links add their own after: {example}")
    if "@" in parts.netloc:
        raise BadHubOption(f"--hub-url {hub_url!r} holds a user name or password, which "
                           f"would be published in every link: {example}")
    routes = _HUB_ROUTES & set(parts.path.split("/"))
    if routes:
        raise BadHubOption(f"--hub-url {hub_url!r} includes the hub's own /{min(routes)}/ "
                           "route: give the address before it (https://hub.example.edu, not "
                           "https://hub.example.edu/hub/home)")
    return hub_url.rstrip("/")


def checked_branch(branch):
    """``branch`` if git could name a branch so (the rules of git check-ref-format), else
    BadHubOption saying which rule it breaks."""
    parts = (branch or "").split("/")
    problems = (
        (not branch, "is empty"),
        (bool(_NOT_IN_A_REF.search(branch or "")),
         "holds a space, a control character or one of ~ ^ : ? * [ \\"),
        ((branch or "").startswith("-"), "starts with -"),
        ("" in parts, "starts or ends with /, or holds //"),
        (any(part.startswith(".") for part in parts), "has a part that starts with ."),
        (any(part.endswith(".lock") for part in parts), "has a part that ends with .lock"),
        ((branch or "").endswith("."), "ends with ."),
        (".." in (branch or ""), "holds .."),
        ("@{" in (branch or ""), "holds @{"),
        (branch in ("@", "HEAD"), "is git's name for the current commit"),
    )
    for broken, problem in problems:
        if broken:
            raise BadHubOption(f"--branch {branch!r} {problem}, so it cannot be a git "
                               "branch: give the branch you push the edition to (default "
                               f"{DEFAULT_BRANCH})")
    return branch


def checked_interface(interface):
    if interface not in INTERFACES:
        raise BadHubOption(f"--hub-interface {interface!r}: give one of "
                           f"{', '.join(INTERFACES)}")
    return interface


def clone_address(repository_url):
    """The address the links ask nbgitpuller to clone: the repository's, without a
    trailing ``/`` or ``.git``. nbgitpuller clones into the address's last part as it
    stands, so ``.../er-students.git`` would land in ``er-students.git/``; without the
    suffix the folder is the repository's name, as in Colab (GitHub, GitLab and git's own
    http server accept both forms). BadHubOption unless it is an http(s) address, which a
    hub can clone without the instructor's SSH keys."""
    address = repository_url.strip().rstrip("/")
    if not address.lower().startswith(("https://", "http://")):
        raise BadHubOption(f"--hub-url needs the edition's https address: the hub clones "
                           f"{repository_url} without your SSH keys (give --repository-url "
                           "https://github.com/you/your-edition)")
    return address.removesuffix(".git")


def checkout_folder(repository_url):
    """The folder, in the student's home on the hub, that nbgitpuller clones into."""
    return clone_address(repository_url).rsplit("/", 1)[-1]


def pull_link(hub_url, repository_url, path="", branch=DEFAULT_BRANCH, interface="lab"):
    """The nbgitpuller link that pulls the repository and opens ``path`` in it (a file or
    folder relative to the repository's top; empty: the repository's folder)."""
    folder = checkout_folder(repository_url)
    target = f"{folder}/{path}" if path else folder
    query = urlencode({"repo": clone_address(repository_url),
                       "urlpath": f"{INTERFACES[checked_interface(interface)]}/{target}",
                       "branch": checked_branch(branch)})
    return f"{checked_hub_url(hub_url)}/hub/user-redirect/git-pull?{query}"


@dataclass(frozen=True)
class HubLinks:
    """An edition's nbgitpuller links for one hub."""
    hub_url: str
    folder: str  # where nbgitpuller clones the edition in each student's home
    interface: str
    whole_edition: str  # pulls the edition and opens its folder
    lessons: dict  # lesson name -> the link that pulls the edition and opens its notebook


def hub_links(hub_url, repository_url, lesson_names, branch=DEFAULT_BRANCH, interface="lab"):
    """The :class:`HubLinks` of an edition holding ``notebooks/<name>.ipynb`` for each of
    ``lesson_names``; BadHubOption for an option no link could work with."""
    hub_url, branch = checked_hub_url(hub_url), checked_branch(branch)
    interface = checked_interface(interface)

    def link(path=""):
        return pull_link(hub_url, repository_url, path, branch, interface)

    return HubLinks(hub_url, checkout_folder(repository_url), interface, link(),
                    {name: link(f"notebooks/{name}.ipynb") for name in lesson_names})
