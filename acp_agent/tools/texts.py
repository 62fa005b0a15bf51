"""Every text of the file tools that the model or the user reads, and the limits they name."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

READ_BYTES = 256 * 1024
"""The most text one read_file call returns (its numbered lines, in UTF-8 bytes)."""
BINARY_PROBE = 8 * 1024
"""A file with a NUL byte in its first this many bytes is binary."""
DIFF_BYTES = 1024 * 1024
"""A write or an edit of a text longer than this (before or after, in UTF-8 bytes) shows a note
instead of a diff."""

LINE_CUT = "[... line cut]"
"""Ends a line of read_file's result that was longer than the line limit, in place of the rest."""
EMPTY_FILE = "(empty file)"


def read_description(max_lines: int, max_line_chars: int) -> str:
    return (
        "Read a text file. Lines come back numbered like `cat -n` (number, tab, text); the "
        f"numbers are not part of the file. One call returns at most {max_lines} lines and "
        f"{READ_BYTES // 1024} KiB: use `offset` (1-based line) and `limit` to read a window of a "
        "long file; the end of the result says when lines remain. Lines longer than "
        f"{max_line_chars} characters are cut, ending with `{LINE_CUT}`."
    )


def more_lines(start: int, end: int) -> str:
    return f"[lines {start}-{end}; more follow: continue with offset {end + 1}]"


def read_limit(start: int, end: int) -> str:
    return (
        f"[lines {start}-{end}; the next line would pass this call's {READ_BYTES // 1024} KiB: "
        f"continue with offset {end + 1}]"
    )


def last_lines(start: int, end: int) -> str:
    return f"[lines {start}-{end} of {end}]"


def past_the_end(start: int, shown: str, total: int | None) -> str:
    if total is None:  # the editor answered with nothing from that line on
        return f"offset {start} is past the end of {shown}"
    return f"offset {start} is past the end of {shown}, which has {plural(total, 'line')}"


NO_CHANGE = "old_text and new_text are the same: there is nothing to change"


def no_match(shown: str) -> str:
    return (
        f"old_text was not found in {shown} (0 occurrences); it must match the file exactly, "
        "whitespace and indentation included"
    )


def ambiguous(shown: str, count: int) -> str:
    return (
        f"old_text occurs {count} times in {shown}; include more surrounding lines to make it unique, "
        f"or set replace_all to replace all {count}"
    )


def written(shown: str, created: bool, lines: int) -> str:
    return f"{'Created' if created else 'Overwrote'} {shown} ({plural(lines, 'line')})."


def edited(shown: str, count: int, line: int) -> str:
    where = f"at line {line}" if count == 1 else f"(the first at line {line})"
    return f"Edited {shown}: replaced {plural(count, 'occurrence')} {where}."


def not_found(shown: str) -> str:
    return f"{shown} does not exist"


def is_a_directory(shown: str) -> str:
    return f"{shown} is a directory, not a file"


def not_owned(shown: str) -> str:
    return f"{shown} belongs to another user: it is not replaced"


def io_error(shown: str, why: str) -> str:
    return f"cannot access {shown}: {why}"


def outside(path: str, roots: Sequence[Path], through_link: bool) -> str:
    """A path that resolves outside the working directory (`roots` is the cwd alone) or outside
    every root of the session (its cwd and additional directories, all named)."""
    if len(roots) == 1:
        if through_link:
            return f"{path} leads outside the working directory {roots[0]} through a symbolic link"
        return f"{path} is outside the working directory {roots[0]}"
    named = ", ".join(map(str, roots))
    if through_link:
        return f"{path} leads through a symbolic link outside the session's roots: {named}"
    return f"{path} is outside the session's roots: {named}"


def binary(shown: str) -> str:
    return f"{shown} is a binary file (a NUL byte in its first {BINARY_PROBE // 1024} KiB), not text"


def not_text(shown: str) -> str:
    return f"{shown} is not a UTF-8 text file"


def diff_too_large(shown: str, old: int | None, new: int) -> str:
    """The note a write or an edit of a large file shows in place of its diff."""
    sizes = f"{_size(new)}" if old is None else f"{_size(old)} before, {_size(new)} after"
    return f"{shown} is over {DIFF_BYTES // (1024 * 1024)} MiB ({sizes}): the change is not shown as a diff."


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):.1f} MiB" if count >= 1024 * 1024 else f"{count} bytes"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


# --- glob and grep ---------------------------------------------------------------------------

GREP_LINE_CHARS = 500
"""An output line of grep longer than this is cut, ending with `LINE_CUT`."""


def glob_description(max_results: int) -> str:
    return (
        "Find files by name with a glob pattern (`**/*.py`, `src/**/test_*.ts`; a pattern without "
        "a slash matches at any depth), under `path` (default: the working directory). Files that "
        ".gitignore (in a git repository) or .ignore exclude are left out, and hidden files unless "
        f"the pattern names them (`.github/**`). Newest first; at most {max_results} results."
    )


def grep_description(head_limit: int) -> str:
    return (
        "Search file contents with a regular expression (Rust regex syntax, as ripgrep), under "
        "`path` (a directory or a file; default: the working directory). Narrow it with `glob` "
        "(`*.py`) or `type` (`py`, `js`, `rust`...). output_mode `content` (default) gives "
        "`path:line:text` lines with `context` lines around each match (`path-line-text`, groups "
        "separated by `--`); `files` gives the paths of matching files; `count` gives "
        "`path:count`. Respects .gitignore; skips binary and hidden files. At most `head_limit` "
        f"lines (default {head_limit}). Prefer it to running grep or rg through bash."
    )


def no_files(pattern: str, shown: str) -> str:
    return f"No files match {pattern} under {shown}."


def files_left_out(shown: int, total: int) -> str:
    return f"[{shown} of {total} files shown, the newest; {total - shown} left out: narrow the pattern or the path]"


def no_matches(pattern: str, shown: str) -> str:
    return f"No matches for {pattern} under {shown}."


def lines_left_out(omitted: int) -> str:
    return f"[{plural(omitted, 'more line')} not shown: narrow the search (path, glob, type) or raise head_limit]"


def not_a_directory(shown: str) -> str:
    return f"{shown} is a file: glob searches a directory"


def search_timed_out(seconds: float) -> str:
    return f"the search took longer than {seconds:g} s and was stopped: narrow it (path, glob, type)"


def search_refused(message: str) -> str:
    return f"the search could not run: {message}"


def unknown_type(name: str, known: list[str]) -> str:
    return f"unknown file type {name!r}; this search knows {', '.join(known)} (or use glob)"


# --- background jobs -------------------------------------------------------------------------

NO_BACKGROUND = "background jobs are not available here: run the command without run_in_background"
NO_JOBS = "No background jobs in this session."
JOB_OUTPUT_DESCRIPTION = (
    "Read what a background job (bash with run_in_background) printed since the last read, and its "
    "state (running, exited with its code, killed). With wait_seconds (at most 60), first wait for "
    "new output or the job's end."
)
JOB_KILL_DESCRIPTION = (
    "Stop a background job: SIGTERM to its process group, SIGKILL if it is still running a few "
    "seconds later. Answers its final state and the output not read yet."
)
JOB_LIST_DESCRIPTION = "List this session's background jobs with their state and command."


def too_many_jobs(limit: int) -> str:
    return f"{limit} background jobs are running already: stop one with job_kill first"


def no_such_job(job_id: str) -> str:
    return f"there is no background job {job_id} in this session (job_list lists them)"


def job_running(job_id: str) -> str:
    return f"{job_id} is running"


def job_killed(job_id: str) -> str:
    return f"{job_id} was killed"


def job_exited(job_id: str, code: int) -> str:
    if code < 0:
        return f"{job_id} was killed by signal {-code}"
    return f"{job_id} exited with code {code}"


def job_output_dropped(count: int) -> str:
    return f"[... {count} bytes of older output dropped ...]"


def job_started(job_id: str, status: str, output: str) -> str:
    return f"Started {job_id} in the background; {status}.\n{_output(output)}"


def job_read(status: str, output: str) -> str:
    # The status starts with the job's id, written as the model and the user know it (`job-1`).
    return f"{status}.\n{_output(output)}"


def job_ended_notice(job_id: str, command: str, status: str) -> str:
    return f"[background job: {status}: {command}; job_output {job_id} reads what it printed last]"


def _output(output: str) -> str:
    return output if output else "(no new output)"


# --- output that does not fit ----------------------------------------------------------------


def output_kept(omitted: int, total: int, path: object) -> str:
    return (
        f"[... {omitted} bytes of output omitted here; all {total} bytes are in {path}: "
        "read_file (offset, limit) or grep it ...]"
    )


def overflow_dropped(count: int) -> str:
    return f"[... {count} bytes dropped here: the file keeps the first and the last 32 MiB ...]"


def scratch_gone(shown: str) -> str:
    return f"{shown} is gone: a session's temporary files are removed when the session closes"


# --- web_fetch -------------------------------------------------------------------------------


def web_fetch_description(max_chars: int) -> str:
    return (
        "Fetch a web page or file over http(s) (GET) and return it as text: HTML converted to "
        "Markdown, plain text and JSON as they are; other types (images, archives) are refused. "
        f"At most {max_chars} characters unless max_chars says otherwise; the result says where it "
        "was cut. Redirects are followed (at most 5). Works for the user's own servers on "
        "localhost too (a dev server started with run_in_background)."
    )


def always_fetch_from(host: str) -> str:
    return f"Always allow fetching from {host}"


def not_http(url: str) -> str:
    return f"{url} is not an http:// or https:// URL"


def host_denied(host: str) -> str:
    return f"fetching from {host} is not allowed here"


def redirected(status: int, url: str, to: str) -> str:
    return f"[{status} redirect: {url} -> {to}]"


def too_many_redirects(limit: int, hops: list[str]) -> str:
    return f"more than {limit} redirects; stopped after: " + " ".join(hops)


def fetch_timed_out(url: str, seconds: float) -> str:
    return f"fetching {url} took longer than {seconds:g} s"


def fetch_failed(url: str, why: str) -> str:
    return f"fetching {url} failed: {why}"


def http_error(url: str, status: int, reason: str) -> str:
    return f"{url} answered {status} {reason}".rstrip()


def not_fetched_type(url: str, kind: str) -> str:
    return f"{url} is {kind}, not text: it was not read (web_fetch reads HTML, text and JSON)"


def fetched(url: str, kind: str, size: int) -> str:
    return f"[fetched {url}: {kind}, {size} bytes]"


def body_cut(limit: int) -> str:
    return f"[the body is longer than {_size(limit)}: only its beginning was read]"


def chars_cut(limit: int, total: int) -> str:
    return f"[cut at {limit} of {total} characters: ask again with a larger max_chars for more]"


# --- repeated calls --------------------------------------------------------------------------

REPEATED_NOTE_AT = 3
REPEATED_FIRM_AT = 5


def repeated_call(steps: int) -> str | None:
    """The note a result gets when its call is the same as in the steps right before it (`steps`
    in a row, this one included); None below `REPEATED_NOTE_AT`."""
    if steps >= REPEATED_FIRM_AT:
        return (
            f"[Note: this is the {steps}th step in a row making this exact call, and the result is "
            "not changing. Stop repeating it: use what you have, try a different approach, or say "
            "what is blocking you.]"
        )
    if steps >= REPEATED_NOTE_AT:
        return (
            f"[Note: you made this exact call in each of the last {steps} steps. If the result is "
            "not what you need, change the arguments or the approach.]"
        )
    return None


# --- read before write -----------------------------------------------------------------------


def not_read(shown: str) -> str:
    return f"{shown} exists and you have not read it in this session: read it with read_file first, then change it"


def changed_since_read(shown: str) -> str:
    return f"{shown} changed on disk since you last read it: read it again with read_file, then change it"


# --- read_image ------------------------------------------------------------------------------


def image_description(max_bytes: int) -> str:
    return (
        "Look at an image file: a PNG, JPEG, GIF or WebP (told by its content, not its name) of at "
        f"most {_size(max_bytes)}, inside the working directory or an additional directory. The image comes back "
        "for you to see; use read_file for text."
    )


def image_read(shown: str, mime_type: str, size: int) -> str:
    return f"{shown}: {mime_type}, {size} bytes"


def no_vision(model: str) -> str:
    return (
        f"the model {model} does not take images (its models entry does not declare vision: true), "
        "so read_image cannot show you one"
    )


def not_an_image(shown: str) -> str:
    return f"{shown} is not a PNG, JPEG, GIF or WebP image (told by its first bytes)"


def image_too_large(shown: str, size: int, max_bytes: int) -> str:
    return f"{shown} is {_size(size)}, more than read_image takes ({_size(max_bytes)})"


# --- roots -----------------------------------------------------------------------------------

PATH_DESCRIPTION = (
    "The file: relative to the working directory, or an absolute path inside it or inside one of the"
    " session's additional directories."
)
"""read_file, write_file, edit_file and read_image's `path` (model-visible)."""
SEARCH_PATH_NOTE = " An absolute path may name a directory inside one of the session's additional directories."
"""Ends glob's and grep's `path` descriptions (model-visible)."""


def roots_section(directories: list[str]) -> str:
    listed = "\n".join(f"- {directory}" for directory in directories)
    return (
        "Besides the working directory, this session's workspace includes these additional directories."
        " The file and search tools reach them by absolute path, and commands may change files in them:"
        f"\n{listed}"
    )


# --- ask_user --------------------------------------------------------------------------------

ASK_USER_DESCRIPTION = (
    "Ask the user a question and wait for the answer: when you cannot go on well without their"
    " decision or information (not for what the other tools can find out). Give `options` for the"
    " user to pick one from (several with `multi_select`); without options the user types the"
    " answer. The user may also decline or dismiss the question."
)
CANNOT_ASK = (
    "ask_user is not available to you here (a subagent, or an editor that cannot show a question):"
    " the call did not run. Put the question in your final answer instead."
)
"""What a call of ask_user answers from an agent that was not given the tool."""
NO_ANSWER = {
    "accept": "The user submitted the form without an answer.",
    "decline": "The user declined to answer the question.",
    "cancel": "The user dismissed the question without answering.",
}
"""What the model reads for a reply that carries no answer, by its action."""


def user_answered(answer: str | list[str]) -> str:
    if isinstance(answer, str):
        return f"The user answered: {answer}"
    if not answer:
        return "The user picked none of the options."
    return "The user picked: " + ", ".join(answer)


def ask_failed(why: str) -> str:
    return f"the question could not be asked: {why}"


def ask_title(question: str) -> str:
    line = " ".join(question.split())
    return f"Ask: {line if len(line) <= 80 else line[:79] + '…'}"
