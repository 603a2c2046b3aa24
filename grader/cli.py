"""``python -m grader release``, ``python -m grader grade PATH`` and the other commands."""

import argparse
import os
import sys
import tempfile
import time

# Only light modules here: every command, --help and argument errors included, pays for
# what this module imports (nbformat alone costs ~1.5 s of CPU through jsonschema), so each
# command imports what it needs when it runs.
from grader.authoring.hub_links import DEFAULT_BRANCH, INTERFACES
from grader.class_run.class_cpu_share import DEFAULT_CPU_WEIGHT, MAX_CPU_WEIGHT
from grader.judge.sandbox_resources import DEFAULT_DISK_MB, DEFAULT_MEMORY_MB


def _release(args):
    from grader.authoring.release import release
    from grader.lessons import REPOSITORY

    written = release(REPOSITORY)
    for path in written:
        print(f"wrote {path.relative_to(REPOSITORY)}")
    print("release: up to date" if not written else f"release: {len(written)} file(s) written")
    return 0


class _Refused(Exception):
    """A command cannot go on as asked: the message, one line, goes to stderr (exit 2)."""


def _grade(args):
    """``grader grade``: refuse what cannot work before anything is graded, grade the
    class, apply what people decided, then print and write what was asked."""
    try:
        isolation, roster, assignments = _before_grading(args)
        found, jobs, only = _class_to_grade(args)
        from grader.outputs.grades_by_people import CannotApply, GradesByPeople
        from grader.outputs.report import lesson_maxima

        maxima = lesson_maxima(only)  # read from every source notebook: once
        try:  # before grading: a typo in the instructor's files costs seconds, not a run
            by_people = GradesByPeople.read(args.manual, args.policy, args.handed_in)
            by_people.check_class(found.students, maxima)
            by_people.check_hand_in_times(found.jobs, args.path, args.file_times)
        except CannotApply as error:
            raise _Refused(str(error)) from None
        chosen = _salt_to_grade_with(args)
    except _Refused as refusal:
        print(f"grader: {refusal}", file=sys.stderr)
        return 2
    _say_how_it_will_be_graded(chosen.value, isolation, found.skipped)
    started = time.monotonic()
    run = _grade_on_dask(args, jobs, chosen.value, only)
    if isinstance(run, int):
        return run
    from grader.judge.sandbox import NOT_ISOLATED
    from grader.judge.sandbox_resources import mechanism_name
    from grader.outputs.report import class_report, summary_table

    for student in found.students:  # a student whose every file was skipped is listed too
        run.results.setdefault(student, [])
    report = class_report(run.results, found.skipped, maxima, found.identities)
    by_people.record_hand_in_times(report, jobs, args.path)
    applied = by_people.apply(report)
    print(summary_table(report))
    _say_what_awaits_a_person(report, args.manual)
    for line in applied:
        print(line)
    print(f"\ngraded {run.graded} notebook(s) of {len(report.submissions)} student(s) in "
          f"{time.monotonic() - started:.1f} s (isolation: {isolation}; budgets per sandbox "
          f"held by {mechanism_name(isolation != NOT_ISOLATED)})"
          + (f"; {run.reused} taken from an earlier run" if run.reused else "")
          + (f"; {run.failed} could not be graded" if run.failed else ""))
    if args.out:
        print(f"results: {args.out} (one file per notebook, graded with {chosen.words}; "
              "--resume with the same salt grades only what it lacks)")
    _write_grade_outputs(args, report, roster, assignments)
    return 0


def _before_grading(args):
    """What must hold before a class is graded, checked in seconds so a finished run is
    never lost to a typo: the path, the workers, the sandbox asked for, the outputs
    writable, the roster and assignments readable. Returns (isolation, roster,
    assignments); raises _Refused."""
    from grader.safe_text import printable

    if not os.path.lexists(args.path):
        raise _Refused(f"no such file or folder: {printable(args.path)}")
    problem = _too_many_workers(args)
    if problem is not None:
        raise _Refused(problem)
    from grader.judge.sandbox import NOT_ISOLATED, isolation_level
    from grader.outputs.gradebooks import GradebookError, Roster, read_assignments
    from grader.outputs.report import check_writable

    isolation = isolation_level(not args.no_sandbox)
    if args.require_sandbox and isolation == NOT_ISOLATED:
        raise _Refused("--require-sandbox: " + (
            "--no-sandbox was given" if args.no_sandbox
            else "this machine cannot give submissions their own namespaces (unshare, "
                 "setpriv and pivot_root from util-linux, and user namespaces)"))
    for option, path in (("--json", args.json), ("--csv", args.csv)):
        if path:
            try:
                check_writable(path)
            except OSError as error:
                raise _Refused(f"{option} {printable(path)}: cannot write there "
                               f"({printable(error.strerror or error)})") from None
    if args.feedback:
        try:
            os.makedirs(args.feedback, exist_ok=True)
            check_writable(os.path.join(args.feedback, ".grader-can-write"))
        except OSError as error:
            raise _Refused(f"--feedback {printable(args.feedback)}: cannot write there "
                           f"({printable(error.strerror or error)})") from None
    try:
        roster = Roster.read(args.roster) if args.roster else None
        assignments = read_assignments(args.assignments) if args.assignments else None
        if args.format == "moodle" and roster is None:
            raise GradebookError("--format moodle needs --roster with an email or id column: "
                                 "Moodle matches students by e-mail or ID number")
    except GradebookError as error:
        raise _Refused(str(error)) from None
    if args.resume and not args.out:
        raise _Refused("--resume needs --out DIR, the folder of the run to resume")
    if args.format == "canvas" and roster is None and args.csv:
        print("grader: --format canvas without --roster: the Student column holds folder "
              "names, and Canvas will match students by name", file=sys.stderr)
    return isolation, roster, assignments


def _class_to_grade(args):
    """(what was found under the path, the jobs to grade, the checks of --only or None);
    raises _Refused."""
    from checks import checks_for_lesson
    from grader.class_run.submissions import CannotGrade, find_jobs

    try:
        found = find_jobs(args.path)
    except CannotGrade as error:
        raise _Refused(str(error)) from None
    jobs, only = found.jobs, None
    if args.only:
        only = {name.strip() for name in args.only.split(",") if name.strip()}
        known = {check.name for job in jobs for check in checks_for_lesson(job.lesson)}
        unknown = sorted(only - known)
        if unknown:
            raise _Refused(f"--only: no check named {', '.join(unknown)} in the lessons found")
        jobs = [job for job in jobs  # lessons without any of those checks: nothing to do
                if only & {check.name for check in checks_for_lesson(job.lesson)}]
    return found, jobs, only


def _salt_to_grade_with(args):
    """The salt chosen (--salt, GRADER_SALT, or the public default); raises _Refused when
    --resume would grade everything again with it."""
    from checks.framework import DEFAULT_HIDDEN_SALT
    from grader.salts import chosen_salt

    chosen = chosen_salt(args.salt, DEFAULT_HIDDEN_SALT)
    if args.resume:
        refusal = _resume_refusal(args.out, chosen)
        if refusal:
            raise _Refused(refusal)
    return chosen


def _say_how_it_will_be_graded(salt, isolation, skipped):
    from checks.framework import DEFAULT_HIDDEN_SALT
    from grader.judge.sandbox import NOT_ISOLATED

    if salt == DEFAULT_HIDDEN_SALT:
        print("grader: no --salt or GRADER_SALT given; using the default salt, which is "
              "public (fine for practice, not for grades)", file=sys.stderr)
    if isolation == NOT_ISOLATED:
        print("grader: grading WITHOUT a sandbox (no Linux namespaces here, or "
              "--no-sandbox): submissions can reach this machine", file=sys.stderr)
    for line in skipped:
        print(f"grader: {line}", file=sys.stderr)


def _write_grade_outputs(args, report, roster, assignments):
    """The report, gradebook and pages asked for. A path that cannot be written now (it
    was writable before grading) gets a rescue file: the run is never lost."""
    from grader.outputs.feedback_pages import write_feedback_pages
    from grader.outputs.gradebooks import gradebook_text, gradebook_warnings
    from grader.outputs.report import write_atomically, write_json
    from grader.safe_text import printable

    outputs, warnings = [], []
    if args.json:
        outputs.append(("report", args.json, lambda path: write_json(report, path)))
    if args.csv:
        text = gradebook_text(report, args.format, roster, assignments, args.moodle_feedback)
        outputs.append(("gradebook", args.csv, lambda path: write_atomically(path, text)))
        warnings = gradebook_warnings(report, roster, args.format)
    if args.feedback:
        pages = write_feedback_pages(report, args.feedback)
        print(f"feedback pages: {len(pages)} in {args.feedback}")
    for what, path, write in outputs:
        try:
            write(path)
            print(f"{what}: {path}")
        except OSError as error:  # it changed since the check: keep the run anyway
            rescue = os.path.join(tempfile.gettempdir(), f"grader-{what}-{os.getpid()}"
                                  + os.path.splitext(path)[1])
            write(rescue)
            print(f"grader: could not write {printable(path)} ({error.strerror}); the "
                  f"{what} is in {rescue}", file=sys.stderr)
    for line in warnings:  # last, where they are seen: who lacks a row, or an identity
        print(f"grader: {line}", file=sys.stderr)


def _say_what_awaits_a_person(report, manual):
    from grader.results import WrittenStatus

    waiting = [answer for _, notebook in report.notebooks() for answer in notebook.written
               if answer.status == WrittenStatus.AWAITING]
    if waiting:
        print(f"\n{len(waiting)} written answer(s) await manual grading "
              f"({sum(answer.max_score for answer in waiting):g} points, not in the scores "
              "above "
              + ("yet: give their points in " + manual if manual else
                 "until a person grades them: --manual FILE writes a file to grade them in")
              + ")")


def _resume_refusal(out, chosen):
    """Why ``--resume`` must not go on with the salt ``chosen``, or None: the results in
    ``out`` were graded with other salts, so it would grade everything again."""
    from checks.framework import DEFAULT_HIDDEN_SALT
    from grader.class_run.result_store import salt_hashes_in
    from grader.salts import FINGERPRINT_DIGITS, salt_hash

    stored = salt_hashes_in(out)
    if not stored or salt_hash(chosen.value) in stored:
        return None
    named = ", ".join(sorted(
        "the public default salt" if digest == salt_hash(DEFAULT_HIDDEN_SALT)
        else f"the salt of fingerprint {digest[:FINGERPRINT_DIGITS]}" for digest in stored))
    return (f"--resume: {out} holds results graded with {named}, not with "
            f"{chosen.words}: pass that salt (--salt SECRET, or GRADER_SALT=SECRET) to "
            "resume, or choose an empty --out folder to grade again with this one")


def _grade_on_dask(args, jobs, salt, only):
    """Grade ``jobs`` on the cluster the options name, keeping results in ``--out`` (or
    a temporary folder): a ``ClassRun``, or the exit code when grading could not finish."""
    import shutil

    from grader.class_run.dask_cluster import ClusterError, grading_cluster
    from grader.class_run.grade_class import grade_class
    from grader.class_run.result_store import ResultStore, StoreError
    from grader.safe_text import printable

    folder = args.out or tempfile.mkdtemp(prefix="grader-results-")
    try:
        store = ResultStore(folder)
    except StoreError as error:
        print(f"grader: --out {error}", file=sys.stderr)
        return 2
    kept_before = len(store.entries)
    if args.out and kept_before and not args.resume:
        store.close()
        print(f"grader: --out {printable(args.out)} holds the results of an earlier run: add "
              "--resume to grade only what it lacks, or choose an empty folder",
              file=sys.stderr)
        return 2
    if args.scheduler and args.workers != 1:
        print("grader: --workers is ignored with --scheduler: the cluster's workers grade",
              file=sys.stderr)
    if args.scheduler and args.cpu_weight != DEFAULT_CPU_WEIGHT:
        print("grader: --cpu-weight is ignored with --scheduler: the cluster's workers run "
              "where they were started", file=sys.stderr)

    def kept():
        count = len(store.manifest_lines())
        resume = f"--out {folder} --resume"
        return (f"{count} result(s) kept in {folder}: run again with {resume} and the same "
                "salt")

    try:
        run = grade_class(
            jobs, salt, store,
            lambda: grading_cluster(args.workers, args.scheduler, not args.no_sandbox,
                                    note=lambda line: print(line, file=sys.stderr),
                                    cpu_weight=args.cpu_weight),
            quiet=args.quiet, memory_mb=args.memory_mb, disk_mb=args.disk_mb,
            isolate=not args.no_sandbox, only=only)
    except ClusterError as error:
        print(f"grader: {error}", file=sys.stderr)
        if store.manifest_lines():
            print(f"grader: {kept()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\ngrader: interrupted; {kept()}", file=sys.stderr)
        return 130
    finally:
        store.close()
    if not args.out:
        shutil.rmtree(folder, ignore_errors=True)
    if args.resume and kept_before and jobs and not run.reused:
        print("grader: --resume: none of the results kept in "
              f"{printable(folder)} matched this run (other --only, budgets, sandbox "
              "setting or course version), so every notebook was graded again",
              file=sys.stderr)
    return run


def _check(args):
    if not os.path.isfile(args.notebook):
        print(f"grader check: {args.notebook}: no such notebook (save it, and give its path "
              "from the folder you are in)", file=sys.stderr)
        return 2
    from checks.framework import VISIBLE_SALT
    from grader.lessons import UnknownLesson
    from grader.student.self_check import printed_report, self_check, write_self_check_json

    salt = args.salt or VISIBLE_SALT
    try:
        notebook, skipped, ignored = self_check(args.notebook, salt, learning=args.learning,
                                                isolate=not args.no_sandbox)
    except UnknownLesson as error:
        print(f"grader check: {error}", file=sys.stderr)
        return 2
    print(printed_report(notebook, skipped, ignored, salt,
                         called_from="cell" if args.from_cell else "terminal"))
    if args.json:
        write_self_check_json(notebook, skipped, ignored, args.json)
    return 0


def _nbgrader_course(args):
    from grader.authoring.nbgrader_course import InsideTheRepository, make_course_directory

    try:
        lessons = make_course_directory(args.directory)
    except InsideTheRepository as error:
        print(f"grader: {error}", file=sys.stderr)
        return 2
    print(f"nbgrader course directory {args.directory} with assignments: {', '.join(lessons)}")
    print(f"next: cd {args.directory} && nbgrader generate_assignment {lessons[0]} --force")
    return 0


def _publish(args):
    from grader.authoring.hub_links import BadHubOption, checked_branch, checked_hub_url

    try:  # before the heavy imports: a mistyped option is answered at once
        checked_branch(args.branch)
        if args.hub_url is not None:
            checked_hub_url(args.hub_url)
    except BadHubOption as error:
        print(f"grader: {error}", file=sys.stderr)
        return 2
    from grader.authoring.publish import CannotPublish, edition_hub_links, publish

    def names(text):
        return None if text is None else [name.strip() for name in text.split(",")
                                          if name.strip()]

    try:
        if args.lessons is not None and not names(args.lessons):
            raise CannotPublish("--lessons names no lesson: give lessons like 01,02,03 "
                                "(or leave the option out to publish them all)")
        edition, files = publish(args.out, names(args.lessons),
                                 names(args.release_references), args.repository_url,
                                 args.hub_url, args.branch, args.hub_interface)
    except CannotPublish as error:
        print(f"grader: {error}", file=sys.stderr)
        return 2
    print(f"student edition in {args.out} ({len(files)} files), for {args.repository_url}")
    print("  lessons: " + ", ".join(lesson.name for lesson in edition.published))
    own = edition.written_by_students
    print("  students write themselves: " + (", ".join(
        f"{lesson.exports_to} (lesson {lesson.name[:2]})" for lesson in own) or "none")
        + (" (later lessons import these from the students' own notebooks)" if own else ""))
    if not edition.released:
        print("  reference modules released: none (--release-references LESSONS releases "
              "the answers of lessons the edition's lessons build on)")
    for lesson in edition.released:
        print(f"  reference module released: {lesson.exports_to} (lesson "
              f"{lesson.name[:2]}'s answer, by --release-references), which "
              f"{', '.join(edition.needed_by[lesson.name])} import"
              f"{'s' if len(edition.needed_by[lesson.name]) == 1 else ''}")
    if args.hub_url is not None:
        hub = edition_hub_links(edition, args.repository_url.strip(), args.hub_url,
                                args.branch, args.hub_interface)
        print(f"  on JupyterHub {hub.hub_url} (nbgitpuller links, also in its README; the hub "
              "needs nbgitpuller and the edition's requirements installed):")
        print(f"    the whole edition: {hub.whole_edition}")
        for name, link in hub.lessons.items():
            print(f"    {name}: {link}")
    print(f"next: push it to {args.repository_url} (branch {args.branch}); the notebooks' "
          "Colab cells clone that repository (it holds no solutions, no grader, no answer "
          "not released)")
    return 0


def _export(args):
    import json

    from grader.safe_text import printable

    from grader.results import ClassReport

    try:
        with open(args.report) as handle:
            data = json.load(handle)
        if not isinstance(data, dict) or "lessons" not in data:
            raise ValueError("not a report of python -m grader grade --json")
        try:
            report = ClassReport.from_data(data)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ValueError(f"not a report of python -m grader grade --json "
                             f"({type(error).__name__}: {error})") from None
    except (OSError, ValueError) as error:
        print(f"grader: {printable(args.report)}: {printable(error)}", file=sys.stderr)
        return 2
    from grader.outputs.gradebooks import (GradebookError, Roster, gradebook_text,
                                           gradebook_warnings, read_assignments)
    from grader.outputs.grades_by_people import CannotApply, GradesByPeople
    from grader.outputs.report import write_atomically, write_json

    try:
        by_people = GradesByPeople.read(args.manual, args.policy)
        applied = by_people.apply(report)
        roster = Roster.read(args.roster) if args.roster else None
        assignments = read_assignments(args.assignments) if args.assignments else None
        text = gradebook_text(report, args.format, roster, assignments, args.moodle_feedback)
    except (GradebookError, *CannotApply) as error:
        print(f"grader: {error}", file=sys.stderr)
        return 2
    for line in applied:
        print(line)
    outputs = [("--csv", args.csv, lambda path: write_atomically(path, text),
                f"{args.format} gradebook"),
               ("--json", args.json, lambda path: write_json(report, path), "report")]
    for option, path, write, what in outputs:
        if not path:
            continue
        try:
            write(path)
        except OSError as error:
            print(f"grader: {option} {printable(path)}: {printable(error)}", file=sys.stderr)
            return 2
        print(f"{what}: {path}")
    if args.feedback:
        from grader.outputs.feedback_pages import write_feedback_pages

        try:
            pages = write_feedback_pages(report, args.feedback)
        except OSError as error:
            print(f"grader: --feedback {printable(args.feedback)}: {printable(error)}",
                  file=sys.stderr)
            return 2
        print(f"feedback pages: {len(pages)} in {args.feedback}")
    if args.csv:
        for line in gradebook_warnings(report, roster, args.format):
            print(f"grader: {line}", file=sys.stderr)
    return 0


def _gradescope(args):
    from grader.authoring.publish import CannotPublish, lesson_named
    from grader.outputs.gradescope import build_bundle
    from grader.safe_text import printable

    try:
        lesson = lesson_named(args.lesson).name
    except CannotPublish as error:
        print(f"grader: {error}", file=sys.stderr)
        return 2
    from grader.salts import chosen_salt

    given = chosen_salt(args.salt, None)
    try:
        salt = build_bundle(lesson, args.out, given.value)
    except OSError as error:
        print(f"grader: {printable(args.out)}: cannot write the bundle there "
              f"({printable(error.strerror or error)})", file=sys.stderr)
        return 2
    if given.value is None:  # made here: the instructor needs it to grade the same way
        where = (f"a random salt made for this bundle, {salt} (it is in the bundle's "
                 f"gradescope_config.json; grade locally with --salt {salt} to get the same "
                 "grades)")
    else:  # the instructor's own secret: named, never shown
        where = given.words
    print(f"Gradescope autograder for {lesson}: {args.out} (upload it as the autograder's "
          f"zip file). Its hidden inputs come from {where}. The bundle holds that salt "
          "and the solutions: keep it away from students.")
    return 0


def _spec(args):
    from grader.authoring.publish import CannotPublish, lesson_named
    from grader.outputs.spec import course_summary, lesson_spec

    if args.lesson is None:
        print(course_summary())
        return 0
    try:
        lesson = lesson_named(args.lesson).name
    except CannotPublish as error:
        print(f"grader: {error}", file=sys.stderr)
        return 2
    print(lesson_spec(lesson))
    return 0


def _similarity(args):
    if not os.path.lexists(args.path):  # before the imports: a mistyped path is answered at once
        from grader.safe_text import printable

        print(f"grader: no such file or folder: {printable(args.path)}", file=sys.stderr)
        return 2
    from grader.authoring.publish import CannotPublish, lesson_named
    from grader.outputs.report import check_writable, write_atomically
    from grader.safe_text import printable

    try:
        check_writable(args.html)
    except OSError as error:
        print(f"grader: --html {printable(args.html)}: cannot write there "
              f"({printable(error.strerror or error)})", file=sys.stderr)
        return 2
    chosen = None
    if args.lessons is not None:
        try:
            chosen = {lesson_named(name.strip()).name for name in args.lessons.split(",")
                      if name.strip()}
        except CannotPublish as error:
            print(f"grader: --lessons: {error}", file=sys.stderr)
            return 2
    started, cpu_started = time.perf_counter(), time.process_time()
    from grader.outputs.similarity import (CannotCompare, answers_of, compare,
                                           notebooks_to_compare)
    from grader.outputs.similarity_page import page

    try:
        jobs, notes = notebooks_to_compare(args.path)
    except CannotCompare as error:
        print(f"grader: {error}", file=sys.stderr)
        return 2
    if chosen is not None:
        jobs = [job for job in jobs if job.lesson in chosen]
    answers, unread = answers_of(jobs)
    for line in notes + unread:
        print(f"grader: {line}", file=sys.stderr)
    if not answers:
        print("grader: nothing to compare: no readable notebook "
              + ("of --lessons " + ",".join(sorted(chosen)) + " " if chosen else "")
              + f"under {printable(args.path)}", file=sys.stderr)
        return 2
    result = compare(answers, top=args.top)
    try:
        write_atomically(args.html, page(result))
    except OSError as error:
        print(f"grader: --html {printable(args.html)}: {printable(error.strerror or error)}",
              file=sys.stderr)
        return 2
    print(f"compared {result.notebooks} notebook(s) of {len(result.students)} student(s) in "
          f"{len(result.lessons)} lesson(s) ({', '.join(result.lessons)}): {result.pairs} "
          "pair(s) of students, lesson by lesson, and each notebook against the released "
          f"solution, in {time.perf_counter() - started:.1f} s "
          f"({time.process_time() - cpu_started:.1f} s of CPU)")
    if result.overall:
        best = result.overall[0]
        print(f"most similar pair: {printable(best.first)} and {printable(best.second)}, "
              f"{100 * best.score:.0f}% over the lessons both handed in")
    matches = result.solution_matches
    print(f"{len(matches)} notebook(s) match the released solution"
          + (": " + ", ".join(f"{printable(m.first)} ({m.lesson}, {100 * m.score:.0f}%)"
                              for m in matches[:10]) if matches else "")
          + (f", and {len(matches) - 10} more" if len(matches) > 10 else ""))
    print(f"page: {args.html} (a list for a person to read: it changes no grade)")
    return 0


def _gradescope_run(args):
    from grader.outputs.gradescope import grade_for_gradescope

    grade_for_gradescope(args.root)
    return 0


def _grades_by_people_options(parser):
    parser.add_argument("--manual", metavar="GRADES.csv",
                        help="grades given by a person (written answers, regrades, excused "
                             "lessons): read, and rows added for answers awaiting a person")
    parser.add_argument("--policy", metavar="POLICY.toml",
                        help="due times, late penalty, grace and extensions")


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m grader",
                                     description="Release and grade the course's notebooks.")
    commands = parser.add_subparsers(dest="command", required=True)
    release_parser = commands.add_parser(
        "release", help="regenerate notebooks/ and the reference modules from solutions/")
    release_parser.set_defaults(run=_release)
    grade = commands.add_parser(
        "grade", help="grade one notebook, one student's folder, or a class folder")
    grade.add_argument("path", help="a notebook, a student's folder, or a folder of them")
    grade.add_argument("--json", metavar="REPORT", help="write the full report as JSON")
    grade.add_argument("--csv", metavar="GRADEBOOK", help="write the gradebook as CSV")
    grade.add_argument("--salt", help="secret that chooses hidden inputs (or GRADER_SALT)")
    grade.add_argument("--workers", type=int, default=1,
                       help="notebooks graded at once, on a Dask LocalCluster started here")
    grade.add_argument("--scheduler", metavar="ADDRESS",
                       help="grade on an existing Dask cluster (tcp://host:8786) instead")
    grade.add_argument("--cpu-weight", type=int, default=DEFAULT_CPU_WEIGHT, metavar="N",
                       help="on a busy machine, the class (grader, workers, sandboxes) "
                            "gets the CPU share of N ordinary processes (a cgroup; "
                            f"default {DEFAULT_CPU_WEIGHT}, 1 to be one of them); grades "
                            "never depend on it, only how long a class takes")
    grade.add_argument("--out", metavar="DIR",
                       help="keep each notebook's result here as soon as it is graded")
    grade.add_argument("--resume", action="store_true",
                       help="with --out: grade only the notebooks DIR has no result for")
    grade.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB,
                       help="memory of each sandbox, all its processes, its /tmp and shared "
                            "memory together (also each process's address-space cap)")
    grade.add_argument("--disk-mb", type=int, default=DEFAULT_DISK_MB,
                       help="size of each sandbox's writable space")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="do not run submissions in Linux namespaces")
    grade.add_argument("--require-sandbox", action="store_true",
                       help="refuse to grade unless submissions run in Linux namespaces")
    grade.add_argument("--feedback", metavar="DIR",
                       help="write one self-contained HTML feedback page per student")
    grade.add_argument("--roster", metavar="ROSTER.csv",
                       help="identities: columns folder, name, id, sis_user_id, "
                            "sis_login_id, email, section")
    grade.add_argument("--format", choices=("generic", "canvas", "moodle"), default="generic",
                       help="gradebook CSV format (default generic)")
    grade.add_argument("--assignments", metavar="ASSIGNMENTS.csv",
                       help="Canvas assignment titles: columns lesson, title, canvas_id")
    grade.add_argument("--moodle-feedback", action="store_true",
                       help="with --format moodle: a feedback column after each grade")
    grade.add_argument("--only", metavar="CHECKS",
                       help="grade only these checks (comma-separated test ids)")
    grade.add_argument("--quiet", action="store_true", help="no progress bar")
    _grades_by_people_options(grade)
    grade.add_argument("--handed-in", metavar="TIMES.csv",
                       help="with --policy: when each notebook was handed in (columns "
                            "student, lesson, time), e.g. from the LMS; else nbgrader's "
                            "timestamp.txt; a notebook with neither is refused")
    grade.add_argument("--file-times", action="store_true",
                       help="with --policy: where --handed-in and timestamp.txt give no "
                            "time, take the file's modification time (a copy or an unzip "
                            "changes it)")
    grade.set_defaults(run=_grade)
    edition = commands.add_parser(
        "publish", help="write the student edition (no solutions, no answers) into a folder")
    edition.add_argument("out", help="a new or empty folder")
    edition.add_argument("--lessons", help="comma-separated lessons to publish (default all)")
    edition.add_argument("--release-references", metavar="LESSONS",
                         help="comma-separated lessons whose answers (reference modules) "
                              "the edition includes, for its lessons to import (default "
                              "none)")
    edition.add_argument("--repository-url", metavar="URL",
                         help="required: the repository the edition will be pushed to, "
                              "which its Colab cells clone")
    edition.add_argument("--branch", default=DEFAULT_BRANCH,
                         help="the branch the edition will be pushed to, which its Colab "
                              f"badges and hub links open (default {DEFAULT_BRANCH})")
    edition.add_argument("--hub-url", metavar="HUB",
                         help="the course's JupyterHub (https://hub.example.edu): print, and "
                              "write in the edition's README, an nbgitpuller link per lesson "
                              "(nbgitpuller must be installed on the hub)")
    edition.add_argument("--hub-interface", choices=tuple(INTERFACES), default="lab",
                         help="what the hub links open the notebooks in: lab (JupyterLab, "
                              "the default) or notebook (the classic notebook)")
    edition.set_defaults(run=_publish)
    export = commands.add_parser(
        "export", help="write a gradebook CSV from a JSON report, without grading again")
    export.add_argument("report", help="a report of python -m grader grade --json")
    export.add_argument("--csv", metavar="GRADEBOOK", help="write the gradebook as CSV")
    export.add_argument("--json", metavar="REPORT",
                        help="write the report with the manual grades and late policy applied")
    export.add_argument("--feedback", metavar="DIR",
                        help="write one HTML feedback page per student again")
    export.add_argument("--format", choices=("generic", "canvas", "moodle"), default="generic")
    export.add_argument("--roster", metavar="ROSTER.csv")
    export.add_argument("--assignments", metavar="ASSIGNMENTS.csv")
    export.add_argument("--moodle-feedback", action="store_true")
    _grades_by_people_options(export)
    export.set_defaults(run=_export)
    bundle = commands.add_parser(
        "gradescope", help="build a Gradescope autograder zip for one lesson")
    bundle.add_argument("lesson", help="the lesson, e.g. 02 or 02_replay_buffer")
    bundle.add_argument("out", help="the zip file to write")
    bundle.add_argument("--salt", help="the secret salt (default: GRADER_SALT, else random)")
    bundle.set_defaults(run=_gradescope)
    run = commands.add_parser(
        "gradescope-run", help="(inside Gradescope) grade /autograder/submission")
    run.add_argument("--root", default="/autograder")
    run.set_defaults(run=_gradescope_run)
    spec = commands.add_parser(
        "spec", help="a lesson's checks as its specification: what each asks, its rules, "
                     "the lesson's sentences and the bugs aimed at each rule")
    spec.add_argument("lesson", nargs="?",
                      help="e.g. 03 or 03_prioritized_replay (default: a line per lesson)")
    spec.set_defaults(run=_spec)
    check = commands.add_parser(
        "check", help="check your own notebook as the grader will grade it")
    check.add_argument("notebook", help="your saved notebook, e.g. notebooks/02_replay_buffer.ipynb")
    check.add_argument("--learning", action="store_true",
                       help="also run the learning checks (a minute or more each)")
    check.add_argument("--salt", help="inputs to check with (default: the public ones)")
    check.add_argument("--no-sandbox", action="store_true", help=argparse.SUPPRESS)
    check.add_argument("--json", help=argparse.SUPPRESS)  # the same data, for tests
    # the lessons' self-check cell: its words say how to ask for more in a cell
    check.add_argument("--from-cell", action="store_true", help=argparse.SUPPRESS)
    check.set_defaults(run=_check)
    similarity = commands.add_parser(
        "similarity", help="a page of the most similar answers: pairs of students, and "
                           "students whose answers are the released solution (changes no "
                           "grade)")
    similarity.add_argument("path", help="a class folder, as grade reads it, or a results "
                                         "folder written by grade --out")
    similarity.add_argument("--html", required=True, metavar="OUT.html",
                            help="the page to write (self-contained)")
    similarity.add_argument("--lessons", help="comma-separated lessons to compare, e.g. "
                                              "01,02 (default: every lesson found)")
    similarity.add_argument("--top", type=int, default=10, metavar="N",
                            help="pairs shown per lesson and over all lessons (default 10)")
    similarity.set_defaults(run=_similarity)
    course = commands.add_parser(
        "nbgrader-course", help="lay out an nbgrader course directory for these lessons")
    course.add_argument("directory")
    course.set_defaults(run=_nbgrader_course)
    return parser


def _argument_problem(args):
    """What makes the options given unusable, in one line, or None: checked before
    anything runs, so an odd value never ends in a traceback from deep inside."""
    if getattr(args, "salt", None) == "":
        return ("--salt is empty: give the secret salt, or leave --salt out (then "
                "GRADER_SALT is used, else the public default salt)")
    if args.run is _export and not (args.csv or args.json or args.feedback):
        return "export writes nothing without --csv GRADEBOOK, --json REPORT or --feedback DIR"
    if args.run is _similarity:
        if args.top < 1:
            return f"--top {args.top}: show at least 1 pair"
        if args.lessons is not None and not any(n.strip() for n in args.lessons.split(",")):
            return ("--lessons names no lesson: give lessons like 01,02 (or leave the option "
                    "out to compare them all)")
    if args.run is not _grade:
        return None
    if args.only is not None and not any(name.strip() for name in args.only.split(",")):
        return "--only names no check: give test ids, comma-separated (--only test_update)"
    if args.workers < 1:
        return f"--workers {args.workers}: at least 1 worker is needed"
    if not 1 <= args.cpu_weight <= MAX_CPU_WEIGHT:
        return (f"--cpu-weight {args.cpu_weight}: give a whole number of ordinary processes "
                f"from 1 to {MAX_CPU_WEIGHT} (the default is {DEFAULT_CPU_WEIGHT})")
    from grader.judge.sandbox_resources import MAX_BUDGET_MB, MIN_DISK_MB, MIN_MEMORY_MB

    if args.memory_mb < MIN_MEMORY_MB:
        return (f"--memory-mb {args.memory_mb} is too little for a sandbox: grading a lesson "
                f"needs at least {MIN_MEMORY_MB} MB (Python, numpy, the course's own cells "
                f"and the checks' work together; the default is {DEFAULT_MEMORY_MB})")
    if args.disk_mb < MIN_DISK_MB:
        return (f"--disk-mb {args.disk_mb}: a sandbox's /tmp needs a budget of at least "
                f"{MIN_DISK_MB} MB (the default is {DEFAULT_DISK_MB})")
    for option, value in (("--memory-mb", args.memory_mb), ("--disk-mb", args.disk_mb)):
        if value > MAX_BUDGET_MB:
            return (f"{option} {value} is more than {MAX_BUDGET_MB} MB, more memory than a "
                    "machine grading a sandbox has (the budget is in megabytes)")
    return None


def _too_many_workers(args):
    """Why the machine cannot hold ``--workers`` local workers, in one line, or None
    (apart from the other options: it needs dask, which costs a second to import)."""
    if args.scheduler:
        return None
    from grader.class_run.dask_cluster import MEMORY_LIMIT, MIN_WORKER_MEMORY

    most = max(1, MEMORY_LIMIT // MIN_WORKER_MEMORY)
    if args.workers > most:
        return (f"--workers {args.workers}: each local worker needs at least "
                f"{MIN_WORKER_MEMORY // 2**20} MB and this machine has "
                f"{MEMORY_LIMIT // 2**20} MB, so at most {most} (about one per core "
                f"is best: {os.cpu_count()} here)")
    return None


def main(argv=None):
    args = build_parser().parse_args(argv)
    problem = _argument_problem(args)
    if problem is not None:
        print(f"grader: {problem}", file=sys.stderr)
        return 2
    return args.run(args)
