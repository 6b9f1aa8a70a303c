"""Reporting: the grades CSV and the feedback pages."""

import html

CSV_COLUMNS = ("student_id", "assignment", "score", "max_score",
               "manual_points", "status", "reason", "feedback")


def fmt(value):
    return f"{value:g}"


def feedback_page(student, assignment, score, max_score, status, reason):
    body = (f"<h1>{html.escape(assignment)}: feedback for "
            f"{html.escape(student)}</h1>\n"
            f"<p>Score: <b>{fmt(score)} / {fmt(max_score)}</b> "
            f"({html.escape(status)})</p>\n")
    if reason:
        body += f"<p>{html.escape(reason)}</p>\n"
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(assignment)}</title></head>\n<body>\n"
            f"{body}</body></html>\n")


def note_html(reason):
    return ('<div style="border:2px solid #c60;padding:0.5em 1em;'
            'margin:1em;background:#fff4e5"><b>Note from the grader:</b> '
            f"{html.escape(reason)}</div>")
