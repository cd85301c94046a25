"""What a contest served to remote authors fixes at `init` beside its game settings: the
limits on an upload (its size, an archive's entries and expanded size, uploads per author per
hour), the build step's limits, how long and how much of each bot's stderr is kept, and
whether the public pages show every game's replay while the contest runs; and the author's
side of an upload (`post_submission`, `meldref contest upload`).

They are kept apart from `ContestSettings` (the games' settings, which the ratings depend
on) in the database's `meta` table under `service`: a contest made before them reads the
defaults (`DEFAULTS`), which are what `init` gives when no flag says otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..engine.game import JSON


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """The service's limits, each named as its `init` flag (`upload_mb` is `--upload-mb`).

    Why these defaults: a bot's source with its data fits in 16 MiB (aiarena takes 50 MB
    zips of compiled bots with models, CodinGame one source file of 100 kB); 2,000 entries
    and 128 MiB expanded hold a vendored Rust or Java project and stop an archive bomb (a
    1 MiB zip of zeros expands to 1 GiB); 12 uploads an hour let an author fix a refused
    upload at once and still bound what the checks cost (each plays two games); a build of
    5 minutes and 2 GiB compiles a Rust bot with its dependencies vendored."""

    upload_mb: int = 16  # the request's body, the uploaded file with its form
    archive_entries: int = 2000  # files and folders in a .zip or .tar.gz
    expanded_mb: int = 128  # what an archive expands to; also a built program's folder
    uploads_per_hour: int = 12  # per author, refused ones included (each costs a check)
    build_seconds: int = 300  # the build step's wall-clock time (and its processes' CPU)
    build_memory_mb: int = 2048  # the build step's memory (its /tmp is the sandbox's)
    log_kb_per_game: int = 256  # of a bot's stderr in one game: the end is kept
    log_mb_per_bot: int = 64  # of all a bot's games' stderr: the oldest go first
    log_days: int = 30  # a game's stderr is removed after this many days
    public_replays: bool = False  # every game's replay (every hand) on the public pages

    def checked(self) -> ServiceSettings:
        """These settings, or `ValueError` naming the first that is not a positive number
        (a module of constants, imported when the command line starts: no `ContestError`,
        whose module brings the games)."""
        for name, value in self.to_json().items():
            if not isinstance(value, bool) and value < 1:
                raise ValueError(f"--{name.replace('_', '-')} {value}: at least 1")
        return self

    def summary(self) -> str:
        """The settings in a line, as `init` and `status` print them."""
        return (f"uploads up to {self.upload_mb} MiB, archives of {self.archive_entries} "
                f"entries expanding to {self.expanded_mb} MiB, {self.uploads_per_hour} uploads "
                f"an author an hour; builds of {self.build_seconds} s and "
                f"{self.build_memory_mb} MiB; stderr kept {self.log_kb_per_game} KiB a game "
                f"and {self.log_mb_per_bot} MiB a bot for {self.log_days} days; replays "
                f"{'public' if self.public_replays else 'shown only to their authors'} while "
                "the contest runs")

    def to_json(self) -> dict[str, int | bool]:
        return dataclasses.asdict(self)

    @staticmethod
    def from_json(data: Mapping[str, JSON]) -> ServiceSettings:
        known = {f.name for f in dataclasses.fields(ServiceSettings)}
        return ServiceSettings(**{k: v for k, v in data.items() if k in known})

    def differs(self, other: ServiceSettings) -> str | None:
        """The first setting in which `other` differs, as `init` names it; None if none."""
        mine, theirs = self.to_json(), other.to_json()
        for key, value in mine.items():
            if value != theirs[key]:
                return f"{key.replace('_', '-')} is {value}, not {theirs[key]}"
        return None


DEFAULTS: Final = ServiceSettings()

SUBMISSIONS: Final = "/api/submissions"
UPLOAD_SECONDS: Final = 900.0  # the server builds and checks before it answers


class UploadError(ValueError):
    """An upload that reached no answer (no such file, no server there); the message says
    which."""


def post_submission(url: str, program: Path, name: str, token: str, command: str | None,
                    build: str | None) -> tuple[int, dict[str, JSON]]:
    """`program` uploaded to the contest at `url` as the bot `name`: the HTTP status and the
    server's JSON answer (201 and the version; else what to fix, `error`)."""
    try:
        data = program.read_bytes()
    except OSError as exc:
        raise UploadError(f"{program}: {exc.strerror or exc}") from None
    fields = {"name": name, "cmd": command, "build": build}
    body, kind = _multipart({k: v for k, v in fields.items() if v is not None},
                            program.name, data)
    target = url.rstrip("/")
    target = target if target.endswith(SUBMISSIONS) else target + SUBMISSIONS
    request = urllib.request.Request(target, body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": kind, "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=UPLOAD_SECONDS) as answer:
            return int(answer.status), _json(answer.read())
    except urllib.error.HTTPError as exc:
        return int(exc.code), _json(exc.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        why = getattr(exc, "reason", exc)
        raise UploadError(f"cannot reach {target}: {why}") from None


def _json(raw: bytes) -> dict[str, JSON]:
    try:
        found = json.loads(raw)
    except ValueError:
        found = None
    if isinstance(found, dict):
        return found
    return {"error": raw[:500].decode("utf-8", "replace") or "(no answer)"}


def _multipart(fields: Mapping[str, str], filename: str, data: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body of `fields` and the file `data` (as the field `file`)."""
    boundary = f"meldref-{secrets.token_hex(16)}"
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n'
             f"{value}\r\n".encode() for key, value in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                 f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                 .encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
