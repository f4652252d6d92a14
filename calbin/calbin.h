/* calbin/calbin.h — a Calculet NPU calbin package as data, and its static
 * acceptance (seed 004, Gates A–F and the service checks of §8).
 *
 * cb_package_open() walks the package directory from one directory fd
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS: nothing outside is ever
 * opened), parses every file it knows with a streaming parser of bounded
 * window (libyaml events, a hand-written line grammar for the metadata
 * text, libelf for ELF, jansson for the tokenizer JSON), builds the model
 * below and runs the gates, each rule a finding of report/report.h with a
 * site, a gate and a policy class.  The library knows no FUSE and no NInfer.
 *
 * For a mount (issue 13) the model is everything a tree needs without
 * parsing again:
 *   files[]        every entry of the package: relative path, type, size,
 *                  identity; cb_package_open_file() opens one beneath root;
 *   reservations[] the DRAM/SRAM/sync ranges of model_memory_reserved_info
 *                  (§4.2), one per domain, the same logical range per chip;
 *   maps[]         the parameter-map lines (§4.3): file index, offset,
 *                  vaddr, size, chip mask, domain, source line, valid flag;
 *   submodels[]    metadata (§5), ibuf/obuf contract, the op I/O YAML as a
 *                  jansson object with keys in file order and per op its
 *                  tensors (§6), profparts op order per chip (§7.1), and a
 *                  summary of every command text dump (§7.2);
 *   manifest       the root <model>.yaml as jansson (keys in file order);
 *   memory         Gate D: bytes by chip and file, the KV figure, address
 *                  unions, overlaps, uncovered and duplicate file bytes;
 * and cb_report_json() gives validation.json and its public variant.
 *
 * Findings: every one has a gate ('A'..'F', 'S' for service) and the scope
 * of report/report.h is derived from it: Gates A–C errors are
 * NF_SCOPE_DIRECTORY (a mount refuses the package, issue 13), other
 * findings NF_SCOPE_FILE, and "could not read" NF_SCOPE_OPERATIONAL (exit
 * 8).  A mount should decide on gates and severities, not on scopes.
 *
 * Everything is immutable after cb_package_open() returns, so readers on
 * several threads may use it without locks; cb_package_open_file() is
 * thread-safe (it only calls openat2 on the root fd).  The package keeps
 * the root fd open until cb_package_close(); files[] keeps no other fd. */
#ifndef NF_CALBIN_CALBIN_H
#define NF_CALBIN_CALBIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "report/report.h"

#define CB_MAX_CHIPS 96      /* a chip mask has 96 bits (§4.3) */
#define CB_MAX_RANK 8        /* dimensions of a shape we keep */
#define CB_FAST_HASH_LIMIT (64ull << 20) /* --fast verifies digests up to this size */

/* seed §2: what a file of the package is. */
enum cb_kind {
	CB_KIND_UNKNOWN = 0,
	CB_KIND_MANIFEST,      /* <model>.yaml */
	CB_KIND_TOP_META,      /* model_memory_reserved_info.txt */
	CB_KIND_HPARAM,        /* hparam.yaml */
	CB_KIND_PARAM_BLOCK,   /* param_blk<n>.bin */
	CB_KIND_SUBMODEL_DIR,  /* <model>_{prefill,decode}_<k>/ */
	CB_KIND_SUB_META,      /* <sub>/submodel_memory_reserved_info.txt */
	CB_KIND_CCU_ELF,       /* <sub>/ccu<core>_chip<n>.elf */
	CB_KIND_CPU_CMD,       /* <sub>/cpu_chip<n>_{ping,pong}.bin */
	CB_KIND_PLD_CMD,       /* <sub>/pld_chip<n>_{ping,pong}.bin */
	CB_KIND_CMD_TEXT,      /* <sub>/{cpu,pld}_chip<n>_{ping,pong}.txt */
	CB_KIND_HELPER_SO,     /* <prefill>/<name>_{riscv,x86}.so */
	CB_KIND_OP_IO_YAML,    /* <sub>/<sub>_op_io_buf_ptr.yaml */
	CB_KIND_PROFPARTS,     /* <sub>/<sub>.chip<n>.profparts */
	CB_KIND_TOKENIZER,     /* __Tokenizer/<file> */
	CB_KIND_VERSION,       /* version.py */
	CB_KIND_ONNX,          /* the delivered ONNX: basename of model_path */
	CB_KIND_HASH_MANIFEST, /* SHA256SUMS */
	CB_KIND_DIR,           /* any other directory (__Tokenizer/, ...) */
	CB_KIND_COUNT
};
const char *cb_kind_name(enum cb_kind k);

enum cb_engine { CB_ENGINE_NONE = 0, CB_ENGINE_CPU, CB_ENGINE_PLD };
enum cb_isa { CB_ISA_NONE = 0, CB_ISA_RISCV, CB_ISA_X86 };  /* helper .so by name */

/* Integrity of one file, after the hash step. */
enum cb_hash_state {
	CB_HASH_NONE = 0,      /* not hashed (fast mode, large file, or no manifest) */
	CB_HASH_OK,            /* computed and equal to SHA256SUMS */
	CB_HASH_MISMATCH,      /* computed and different */
	CB_HASH_COMPUTED,      /* computed, nothing to compare with */
	CB_HASH_FAILED,        /* the file could not be read */
};

struct cb_file {
	char *path;            /* relative to the root, '/'-separated, no "." or ".." */
	mode_t type;           /* S_IFREG or S_IFDIR; S_IFLNK for a symlink not followed */
	uint64_t size;         /* bytes (regular files) */
	dev_t dev;             /* identity of what was opened (a mount can see replacements) */
	ino_t ino;
	int64_t mtime_ns;
	bool symlink;          /* the name is a symlink resolved beneath the root */
	bool escapes;          /* a symlink out of the package, or broken: never opened */
	enum cb_kind kind;
	int submodel;          /* index into submodels[], -1 */
	int chip, core;        /* from the name, -1 when the name has none */
	enum cb_engine engine; /* command files */
	bool pong;             /* command files: pong (else ping) */
	enum cb_isa isa;       /* helper .so: the ISA its name claims */
	enum cb_hash_state hash;
	char sha256[65];       /* lowercase hex when computed, else "" */
	uint64_t sums_line;    /* its line in SHA256SUMS, 0 when not listed */
	struct cb_elf *elf;    /* ELF files: what libelf read (NULL otherwise) */
};

/* An ELF file's header and dynamic section (seed §5.2), read with libelf. */
struct cb_elf {
	bool ok;               /* libelf parsed the header */
	unsigned elf_class;    /* ELFCLASS32 / ELFCLASS64 */
	unsigned machine;      /* e_machine: the ISA (never taken from the name) */
	unsigned type;         /* e_type: ET_EXEC, ET_DYN, ... */
	size_t nneeded;
	char **needed;         /* DT_NEEDED, in order */
};

/* seed §4.2: one reservation line. */
enum cb_domain { CB_DOMAIN_DRAM = 0, CB_DOMAIN_SRAM, CB_DOMAIN_SYNC, CB_DOMAIN_COUNT };
const char *cb_domain_name(enum cb_domain d);

struct cb_reservation {
	bool present;
	uint64_t vaddr, size;
	uint64_t line;
};

/* seed §4.3: one parameter-map line. */
struct cb_map {
	char *file;            /* as written */
	int file_index;        /* into files[], -1 when absent or not a regular file */
	uint64_t offset, vaddr, size;
	uint32_t mask[3];      /* [0] bits 95..64, [1] 63..32, [2] 31..0 (as written) */
	int domain;            /* enum cb_domain its vaddr falls in, -1 none */
	uint64_t line;
	bool valid;            /* file, range, mask and domain all passed */
};
/* Bit `chip` of a 96-bit mask as written (high word first). */
bool cb_mask_has(const uint32_t mask[3], unsigned chip);
/* No bit at or above `chips` is set. */
bool cb_mask_within(const uint32_t mask[3], unsigned chips);

/* seed §5.2: a command or ELF declaration of a submodel. */
struct cb_decl {
	char *file;
	bool elf;
	char *location;        /* ELF: "dram" | "sram"; NULL for commands */
	uint32_t mask[3];
	uint64_t line;
	int file_index;        /* -1 when the file is absent */
};

/* seed §5.3: ibuf/obuf. */
struct cb_buf {
	char *name;
	bool out;              /* obuf */
	uint32_t rank;
	uint64_t dims[CB_MAX_RANK];
	char *dtype;
	unsigned dtype_bytes;  /* 0: unknown dtype */
	uint64_t ping, pong, size;
	uint64_t line;
};

struct cb_icsr {
	char *name;
	uint64_t offset;
	uint64_t line;
};

/* seed §6: one args_N/outs_N entry of an op. */
enum cb_tensor_class { CB_TENSOR_ACTIVATION = 0, CB_TENSOR_CONST, CB_TENSOR_INPUT };
struct cb_tensor {
	bool out;              /* outs_N */
	uint32_t index;        /* N */
	uint64_t vaddr;
	uint32_t rank;
	uint64_t dims[CB_MAX_RANK];
	const char *dtype;     /* points into the op YAML's jansson tree */
	unsigned dtype_bytes;  /* 0: unknown dtype */
	const char *role;      /* producer_or_role, into the jansson tree */
	enum cb_tensor_class klass;
	uint64_t bytes;        /* product(dims) * dtype_bytes; 0 when unknown/overflow */
	uint64_t line;
};

struct cb_op {
	const char *name;      /* the op YAML key (into the jansson tree) */
	uint64_t line;
	size_t ntensors;
	struct cb_tensor *tensors;
};

/* seed §7.1: one chip's op order. */
struct cb_profparts {
	int file_index;        /* -1: absent */
	size_t count;
	char **ops;            /* one name a line, in order */
	uint64_t *lines;       /* the line of each */
	bool refused;          /* an unknown op: no partition report (§10) */
};

/* seed §7.2: one command text dump, summarized. */
struct cb_cmd_type {
	char *type;            /* the comment line's COMMAND_TYPE */
	uint64_t count, data_bytes;
};
struct cb_commands {
	int file_index;        /* the .txt */
	int bin_index;         /* the .bin beside it, -1 */
	enum cb_engine engine;
	int chip;
	bool pong;
	bool parsed;           /* read to the end without a syntax error */
	uint64_t count, data_bytes;
	uint64_t bin_count;    /* the .bin header's count, when it has one */
	size_t ntypes;
	struct cb_cmd_type *types;
};

enum cb_sub_kind { CB_SUB_PREFILL = 0, CB_SUB_DECODE };

/* seed §5.1 identity lines of a submodel metadata file. */
struct cb_submeta {
	char *model_arch, *smodel_type, *calc_mchip, *calc_utype, *ccu_stack_location;
	bool has_n_batch, has_workload;
	uint64_t n_batch, workload;
	uint64_t line_model_arch, line_smodel_type, line_n_batch;
	size_t ndecls, nicsrs, nbufs;
	struct cb_decl *decls;
	struct cb_icsr *icsrs;
	struct cb_buf *bufs;   /* in file order; .out tells ibuf from obuf */
};

struct cb_submodel {
	char *dir;             /* directory name */
	enum cb_sub_kind kind;
	unsigned k;            /* the _<k> suffix */
	int meta_index, opio_index;  /* into files[], -1 */
	bool meta_ok;          /* the metadata was read (grammar findings may stand) */
	struct cb_submeta meta;
	json_t *ops_json;      /* the op I/O YAML, keys in file order (NULL: unread) */
	size_t nops;
	struct cb_op *ops;     /* in file order */
	bool ops_ok;           /* every entry had the §6 form */
	size_t nprofparts;     /* = chips */
	struct cb_profparts *profparts;  /* [chip] */
	size_t ncommands;
	struct cb_commands *commands;    /* one per command text dump found */
	uint64_t union_bytes;  /* static address coverage of its op I/O (§6), see memory */
	bool union_valid;
	uint64_t graph_layers; /* distinct past_key_i its ops read (input_N roles) */
	unsigned kv_dtype_bytes;  /* dtype bytes of those KV inputs, 0 unknown */
};

/* seed §4.1 top-level metadata. */
struct cb_topmeta {
	char *calcc_ver, *model_arch, *model_type;
	size_t ndevices;
	char **devices;        /* device<N>: [list], flattened in order */
	bool has_mem_required, has_n_batch, has_max_seq;
	uint64_t mem_required_mb, n_batch, max_seq_len;
	uint64_t line_calcc_ver, line_mem_required, line_model_arch, line_model_type;
	uint64_t line_n_batch, line_max_seq, line_device;
};

/* An overlap of two valid map lines on one chip and domain (§4.3 rule 5). */
struct cb_overlap {
	unsigned chip;
	enum cb_domain domain;
	size_t map_a, map_b;   /* indices into maps[], a before b */
	uint64_t vaddr, bytes; /* the overlapping range */
};

/* Gate D (§4.2, §6, §9 D). */
struct cb_memory {
	uint64_t param_bytes_by_chip[CB_MAX_CHIPS];        /* sum of valid map sizes per chip */
	uint64_t param_bytes_by_chip_domain[CB_MAX_CHIPS][CB_DOMAIN_COUNT];
	/* Per param block (index into files[]; -1 unused): mapped, uncovered and
	 * duplicate file bytes (§4.3 rule 6). */
	size_t nblocks;
	struct cb_block_cover {
		int file_index;
		uint64_t file_bytes, mapped_bytes, covered_bytes, uncovered_bytes, duplicate_bytes;
		uint64_t uncovered_ranges, duplicate_ranges;
	} *blocks;
	bool kv_valid;         /* the KV figure could be computed (§9 D) */
	uint64_t kv_layers, kv_heads, kv_head_dim, kv_max_seq, kv_dtype_bytes;
	uint64_t kv_bytes, kv_bytes_per_chip;
	bool capacity_refused; /* an unknown dtype in an op I/O YAML (§6, §10) */
	size_t noverlaps;      /* every overlap, in map order */
	struct cb_overlap *overlaps;
};

struct cb_options {
	bool hash_all;         /* --hash: SHA-256 of every file */
	int threads;           /* workers for dumps and hashes; 0: 2 */
	/* Called from the hashing workers (serialized) as bytes are hashed;
	 * NULL for none.  total is the bytes that will be hashed. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

struct cb_package {
	char *root_path;       /* as given to cb_package_open */
	char *name;            /* basename of the root */
	int rootfd;            /* O_PATH | O_DIRECTORY */
	bool readable;         /* the root could be opened and listed */
	bool hash_all;
	size_t nfiles;
	struct cb_file *files; /* sorted by path; directories included */
	int manifest_index, top_meta_index, hparam_index, sums_index;  /* -1 absent */
	json_t *manifest;      /* the root manifest (NULL: unread or not a mapping) */
	json_t *hparam;
	struct cb_topmeta top;
	bool top_ok;
	struct cb_reservation reservations[CB_DOMAIN_COUNT];
	size_t nmaps;
	struct cb_map *maps;
	size_t nsubmodels;
	struct cb_submodel *submodels;  /* prefill first, then decode, by k */
	unsigned chips;        /* device_cfg.chip_nums when consistent, else 0 */
	unsigned cores;        /* device_cfg.calcore_num */
	json_t *hf_config;     /* __Tokenizer/config.json, tokenizer_config.json, ... */
	json_t *tokenizer_config;
	json_t *generation_config;
	struct cb_memory memory;
	char sums_sha256[65];  /* SHA-256 of SHA256SUMS itself, "" when absent */
	uint64_t hashed_bytes; /* bytes hashed this run */
};

/* Open, parse and check the package directory `dir`.  Findings go to r.
 * Returns 0 and *out (free with cb_package_close) even when the package has
 * errors; -errno with *out NULL only when memory ran out before a model
 * existed.  An unreadable root is a PKG_UNREADABLE finding (exit 8) and a
 * package with readable == false. */
int cb_package_open(const char *dir, const struct cb_options *opt, struct nf_report *r,
		    struct cb_package **out);
void cb_package_close(struct cb_package *p);

/* A new read-only fd for files[i] (a regular file), opened beneath the root
 * (never following a symlink out), or -errno.  The caller closes it. */
int cb_package_open_file(const struct cb_package *p, size_t i);
/* The index of `path` in files[], or -1. */
int cb_package_find(const struct cb_package *p, const char *path);

/* validation.json (seed §11 plus gates, reproducible, the finding sites):
 * pretty-printed, newline-terminated, malloc'd; NULL on OOM.  public: the
 * sanitized variant (no vaddr, no address in evidence, no absolute path,
 * no argv).  tool/argv go into "tool" (argv only when !public). */
char *cb_report_json(const struct cb_package *p, const struct nf_report *r, bool public_variant,
		     const char *tool, int argc, char *const *argv);
/* Human text: one line per finding, the gates, a summary line (public:
 * evidence sanitized as in the public JSON). */
void cb_report_print_text(FILE *out, const struct cb_package *p, const struct nf_report *r,
			  bool public_variant);
/* false when a BLOCKED_REPRODUCIBILITY finding stands (or there is no
 * readable package with a manifest): "may run, must not be called
 * reproducible" (§10). */
bool cb_reproducible(const struct cb_package *p, const struct nf_report *r);
/* memory.json for a mount: Gate D as a JSON document (addresses included). */
char *cb_memory_json(const struct cb_package *p);

/* Dtype bytes of seed §6's PrimitiveType names (issue 12 conventions):
 * bfloat16 2, float16 2, float32 4, int32 4, int8 1, uint8 1, int64 8,
 * bool 1; 0 for anything else. */
unsigned cb_dtype_bytes(const char *name);

#endif
