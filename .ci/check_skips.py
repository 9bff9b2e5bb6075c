#!/usr/bin/env python3
"""check_skips.py: fails when a test skipped that is not in the list of allowed skips.

Usage: check_skips.py ALLOWED_SKIPS JUNIT_XML...

JUNIT_XML is ctest's --output-junit file (one <testcase> per test, with a <skipped/> element
when GoogleTest's "[  SKIPPED ]" matched the SKIP_REGULAR_EXPRESSION that
gtest_discover_tests sets, and the test's output in <system-out>). A test counts as skipped
when it has <skipped/> or when its output has GoogleTest's "[  SKIPPED ]" line.

ALLOWED_SKIPS has one test a line, "Suite.Test  reason" (ctest's test name, then the reason
it may skip); blank lines and lines starting with '#' are ignored. A listed test that did
not skip is fine (a machine where its precondition holds).

Exit status: 0 when every skip is listed; 1 when a skip is not (each one named, with its
skip message), or when a file holds no test at all (a run that tested nothing proves
nothing); 2 for bad input (unreadable or malformed files, a list entry without a reason).
"""
import sys
import xml.etree.ElementTree as ElementTree

SKIPPED_LINE = "[  SKIPPED ] "


class BadInput(Exception):
    pass


def read_allowed(path):
    """Test name -> reason, from the list file."""
    allowed = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}")
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        fields = text.split(None, 1)
        if len(fields) < 2:
            raise BadInput(f"{path}:{number}: expected 'Suite.Test  reason', got {text!r} "
                           "(every allowed skip needs its reason)")
        name, reason = fields
        if name in allowed:
            raise BadInput(f"{path}:{number}: {name} is listed twice")
        allowed[name] = reason
    return allowed


def skip_message(name, output):
    """The lines GoogleTest printed between 'FILE:LINE: Skipped' and '[  SKIPPED ] NAME'."""
    lines = output.splitlines()
    end = next((i for i, line in enumerate(lines) if line.startswith(SKIPPED_LINE + name)), None)
    if end is None:
        return "(no skip message in the test's output)"
    start = end
    while start > 0 and not lines[start - 1].endswith(": Skipped"):
        start -= 1
    if start == 0:
        return "(no skip message in the test's output)"
    where = lines[start - 1][: -len(": Skipped")]
    message = " | ".join(line for line in lines[start:end] if line.strip())
    return f"{message or '(empty message)'} [{where}]"


def read_results(path):
    """(test name, skipped, output) for every <testcase> of a ctest JUnit file."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as e:
        raise BadInput(f"{path}: cannot read as JUnit XML: {e}")
    results = []
    for case in root.iter("testcase"):
        name = case.get("name")
        if not name:
            raise BadInput(f"{path}: a <testcase> without a name")
        output = case.findtext("system-out") or ""
        skipped = case.find("skipped") is not None or any(
            line.startswith(SKIPPED_LINE) for line in output.splitlines())
        results.append((name, skipped, output))
    return results


def check(allowed_path, junit_paths, out=sys.stdout):
    """The exit status (see the module's comment); what is wrong goes to `out`."""
    try:
        allowed = read_allowed(allowed_path)
        runs = [(path, read_results(path)) for path in junit_paths]
    except BadInput as e:
        print(f"check_skips: {e}", file=out)
        return 2
    status = 0
    for path, results in runs:
        if not results:
            print(f"check_skips: {path}: no test ran", file=out)
            status = 1
            continue
        unlisted = [(name, output) for name, skipped, output in results
                    if skipped and name not in allowed]
        listed = sorted(name for name, skipped, _ in results if skipped and name in allowed)
        for name, output in unlisted:
            print(f"check_skips: {path}: {name} skipped and is not in {allowed_path}: "
                  f"{skip_message(name, output)}", file=out)
        if unlisted:
            status = 1
        print(f"check_skips: {path}: {len(results)} tests, {len(unlisted)} unlisted skips, "
              f"{len(listed)} allowed skips{': ' + ', '.join(listed) if listed else ''}",
              file=out)
    return status


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    return check(argv[1], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
