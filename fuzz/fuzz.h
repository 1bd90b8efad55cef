/* fuzz.h: what every harness shares: the libFuzzer entry point and a bounded reader of the input. */
#ifndef GOTOP_FUZZ_H
#define GOTOP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Each fuzz/fuzz-NAME.c defines it; fuzz/fuzz-main.c runs it under libFuzzer
 * (--enable-fuzzing) or replays tests/fuzz-corpus/NAME/ once (the normal build). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Takes fields off the front of the input; past the end every field reads as zero, so a
 * harness never needs to check lengths itself. */
struct fz {
	const uint8_t *p;
	size_t n;
};

static inline void fz_take(struct fz *f, void *out, size_t len)
{
	size_t k = len < f->n ? len : f->n;

	if (k)
		memcpy(out, f->p, k);
	if (k < len)
		memset((uint8_t *)out + k, 0, len - k);
	f->p += k;
	f->n -= k;
}

static inline uint8_t fz_u8(struct fz *f)
{
	uint8_t v;

	fz_take(f, &v, 1);
	return v;
}

static inline uint16_t fz_u16(struct fz *f)
{
	uint16_t v;

	fz_take(f, &v, 2);
	return v;
}

static inline uint32_t fz_u32(struct fz *f)
{
	uint32_t v;

	fz_take(f, &v, 4);
	return v;
}

static inline uint64_t fz_u64(struct fz *f)
{
	uint64_t v;

	fz_take(f, &v, 8);
	return v;
}

/* Borrows up to len bytes of the input; *got gets how many there were. */
static inline const uint8_t *fz_bytes(struct fz *f, size_t len, size_t *got)
{
	const uint8_t *p = f->p;
	size_t k = len < f->n ? len : f->n;

	f->p += k;
	f->n -= k;
	*got = k;
	return p;
}

#endif
