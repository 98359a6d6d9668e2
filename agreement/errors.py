"""The error a person can act on, for label and result files read by `agreement`.

Same shape as `ground_truth.errors.InputError` (path, message, field) plus the spreadsheet row,
so the CLI can treat both alike (print `str(error)`, exit 2). `agreement` does not import
`ground_truth`, hence its own class.
"""

from __future__ import annotations

from pathlib import Path


class LabelFileError(ValueError):
    """A bad label or result file. `str()` names the file, the row and field, and what was expected.

    `row` is the spreadsheet row number (the header is row 1, the first data row is row 2).
    """

    def __init__(
        self,
        path: str | Path | None,
        message: str,
        row: int | None = None,
        field: str | None = None,
    ):
        self.path = str(path) if path is not None else None
        self.message = message
        self.row = row
        self.field = field
        where = self.path or "<input>"
        if row is not None:
            where += f": row {row}"
        if field:
            where += f": {field}"
        super().__init__(f"{where}: {message}")
