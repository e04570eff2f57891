#ifndef CSTRATASYSTEM_H
#define CSTRATASYSTEM_H

/// Renames `from` to `to` only if nothing is at `to` (`renameat2` with
/// `RENAME_NOREPLACE`; `renamex_np` with `RENAME_EXCL` on Darwin). Returns 0,
/// or -1 with errno set: `EEXIST` when `to` exists, `EINVAL` or `ENOSYS`
/// when the file system or kernel cannot do it.
int strata_rename_noreplace(const char *from, const char *to);

#endif
