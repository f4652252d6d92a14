/* fs/names.h — how a record name becomes a file name (man ninferfs.5, NAMES).
 *
 * The rule, applied to one name component (an object id, a component id, a
 * resource role, or one '/'-separated piece of a binding name):
 *   - '%' becomes "%25" and '/' becomes "%2F", everywhere;
 *   - a component that is exactly "." becomes "%2E", ".." becomes "%2E%2E";
 *   - the empty component becomes "%" (a lone '%' is never produced
 *     otherwise, since '%' itself is always escaped);
 *   - every other byte is kept as is (names are valid UTF-8 without NUL);
 *   - a result longer than 255 bytes (NAME_MAX) is cut to its first 230
 *     bytes (never inside an escape or a UTF-8 sequence) followed by
 *     "%~" and 16 lowercase hex digits of the FNV-1a 64 hash of the
 *     original component.
 * A binding name is cut at every '/' into components, empty ones
 * included ("/x" is "" and "x": bindings/%/x); the last is the leaf.  A
 * binding leaf whose path is also a directory (its name and a '/' start
 * another binding's name) is stored as "<dir>/%self".  "%self" and "%~" can never
 * come out of the escaping of a name, so the rule is injective but for
 * cut names whose hashes collide (fs/tree.c refuses the build then). */
#ifndef NF_FS_NAMES_H
#define NF_FS_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define NF_NAME_MAX 255
#define NF_SELF_NAME "%self"

/* Escape `len` bytes of `in` into `out` (room for NF_NAME_MAX+1 bytes);
 * returns the length written (NUL-terminated). */
size_t nf_escape_component(const char *in, size_t len, char out[NF_NAME_MAX + 1]);
/* Whether an escaped name is a cut one ("%~" and a hash): the only names
 * two different components can share. */
bool nf_escape_is_cut(const char *esc, size_t len);

#endif
