"""The folders learning-management systems download, read as classes: whose each
notebook is, from what the LMS wrote, never from guesses about folder names.

- **Canvas** ("Download Submissions"): one flat folder, every file named
  ``<name>_[LATE_]<user id>_<file id>_<file name>``. Each file is the student
  ``<name>_<user id>``'s (the user id tells apart two students of one name), whose
  identity is ``{"id": user id}``, the ``ID`` of Canvas's gradebook.
- **Gradescope** (an assignment's "Export Submissions"): ``submission_metadata.yml`` beside a
  folder ``submission_<id>/`` per submission, the metadata naming each submission's
  submitters (``:name:``, ``:email:``, ``:sid:``). Each submitter is a student, keyed by
  e-mail, whose identity is ``{"email": ..., "sis_user_id": sid}``; a group submission is
  graded for each of its members. The metadata is read whole, or the class is refused in
  one line.
- **Moodle** ("Download all submissions", files in folders): a folder per student and
  submission plugin, ``<full name>_<participant id>_assignsubmission_<plugin>_``; the
  student is ``<full name>_<participant id>``, all of whose folders are theirs.

A roster row matches such a student by its folder name or by the identity
(:meth:`grader.outputs.gradebooks.Roster.key_of`).
"""

import re

from grader.class_run.submissions import (CannotGrade, Found, Skipped, jobs_of_student,
                                          notebooks_under)
from grader.safe_text import printable

# the name being the student's sortable name, lowercased, without spaces or punctuation
CANVAS_FILE = re.compile(r"(?P<name>[^_]+)_(?:LATE_)?(?P<user>\d+)_(?P<file>\d+)_(?P<rest>.+)")
GRADESCOPE_METADATA = "submission_metadata.yml"
GRADESCOPE_FOLDER = re.compile(r"submission_\d+")
MOODLE_FOLDER = re.compile(r"(?P<student>.+_\d+)_assignsubmission_[a-z]+_")


def canvas_student(file_name):
    """``(student, user id)`` of a file of a Canvas download, the student being
    ``<name>_<user id>``, else None."""
    match = CANVAS_FILE.fullmatch(file_name)
    return (f"{match['name']}_{match['user']}", match["user"]) if match else None


def canvas_download(path, direct, subfolders, found, inner_skips):
    """A :class:`Found` when ``path`` is a Canvas download (no folder holding notebooks, and
    its notebooks named as Canvas names them: all of them, or those of two students or
    more), else None. A notebook not named so there belongs to no student: skipped."""
    parsed = {entry: canvas_student(entry.name) for entry in direct}
    owners = {entry: match[0] if match else None for entry, match in parsed.items()}
    users = dict(match for match in parsed.values() if match)
    named = set(users)
    if not named or any(found[folder] or inner_skips[folder] for folder in subfolders):
        return None
    if len(named) < 2 and None in owners.values():
        return None
    skipped = [Skipped(None, f"{printable(entry)}: in a Canvas download, a notebook not "
                             "named as Canvas names them (<name>_<user id>_<file id>_<file>) "
                             "belongs to no student, skipped")
               for entry, owner in owners.items() if owner is None]
    skipped += [Skipped(None, f"{printable(folder)}: an empty folder in a Canvas download, "
                              "skipped") for folder in subfolders]
    jobs = []
    for student in sorted(named):
        mine = [entry for entry, owner in owners.items() if owner == student]
        jobs += jobs_of_student(student, path, mine, skipped)
    return Found(jobs, skipped, sorted(named),
                 {student: {"id": user} for student, user in users.items()})


def gradescope_export(path, direct, subfolders, found, inner_skips):
    """A :class:`Found` when ``path`` holds Gradescope's ``submission_metadata.yml``, else
    None; CannotGrade, in one line, when that file cannot be read whole."""
    metadata_path = path / GRADESCOPE_METADATA
    if not metadata_path.is_file():
        return None
    submitters = _gradescope_submitters(metadata_path)
    by_name = {folder.name: folder for folder in subfolders}
    students, identities, skipped = {}, {}, []
    for submission, people in submitters.items():
        folder = by_name.get(submission)
        for person in people:
            student = person["email"].lower()
            students.setdefault(student, [])
            identities[student] = {"email": person["email"]} | (
                {"sis_user_id": person["sid"]} if person["sid"] else {})
            if folder is None:
                skipped.append(Skipped(student, f"{printable(path / submission)}: named in "
                                                f"{GRADESCOPE_METADATA} but not in the "
                                                "download, nothing graded"))
                continue
            students[student].append(folder)
    skipped += [Skipped(None, f"{printable(folder)}: a folder {GRADESCOPE_METADATA} names "
                              "no submitter of, skipped")
                for folder in subfolders if folder.name not in submitters]
    skipped += [Skipped(None, f"{printable(entry)}: a notebook outside every submission's "
                              "folder belongs to no student, skipped") for entry in direct]
    jobs = []
    for student, folders in sorted(students.items()):
        notebooks = []
        for folder in folders:
            skipped += [Skipped(student, entry.reason, entry.lesson, entry.lesson_note)
                        for entry in inner_skips[folder]]
            notebooks += found[folder]
        if folders and not notebooks:
            skipped.append(Skipped(student, f"{printable(folders[0])}: no notebook (.ipynb) "
                                            "in this submission, nothing graded"))
        jobs += jobs_of_student(student, path, notebooks, skipped)
    return Found(jobs, skipped, sorted(students), identities)


def _gradescope_submitters(metadata_path):
    """``{submission folder: [{"email", "name", "sid"}, ...]}`` from Gradescope's metadata,
    read whole: CannotGrade naming the first entry it cannot use."""
    import yaml

    shown = printable(metadata_path)
    try:
        data = yaml.safe_load(metadata_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise CannotGrade(f"{shown}: cannot be read as Gradescope's metadata "
                          f"({printable(str(error).splitlines()[0] if str(error) else error, 200)})"
                          ) from None
    if not isinstance(data, dict) or not data:
        raise CannotGrade(f"{shown}: not Gradescope's metadata (a mapping of submission "
                          "folders to their submitters)")
    submitters = {}
    for submission, entry in data.items():
        where = f"{shown}: {printable(submission)}"
        if not isinstance(submission, str) or not GRADESCOPE_FOLDER.fullmatch(submission):
            raise CannotGrade(f"{where}: not a submission folder (submission_<id>)")
        people = entry.get(":submitters") if isinstance(entry, dict) else None
        if not isinstance(people, list) or not people:
            raise CannotGrade(f"{where}: names no submitters (:submitters:)")
        submitters[submission] = []
        for person in people:
            email = person.get(":email") if isinstance(person, dict) else None
            if not isinstance(email, str) or "@" not in email:
                raise CannotGrade(f"{where}: a submitter without an e-mail, which the "
                                  "grader keys students by")
            sid = person.get(":sid")
            submitters[submission].append({"email": email.strip(),
                                           "name": str(person.get(":name") or ""),
                                           "sid": "" if sid is None else str(sid).strip()})
    return submitters


def moodle_students(folders):
    """``{student: [folders]}``: a student per folder, except that Moodle's folders
    ``<full name>_<participant id>_assignsubmission_<plugin>_`` are their student's,
    ``<full name>_<participant id>``, one per submission plugin."""
    students = {}
    for folder in folders:
        match = MOODLE_FOLDER.fullmatch(folder.name)
        students.setdefault(match["student"] if match else folder.name, []).append(folder)
    return students
