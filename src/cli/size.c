// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * size.c - sizes in, sizes out, the way util-linux spells them
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "size.h"

static const char units[] = "KMGTPE";

/* The multiplier a suffix stands for, or 0 if it is not one. */
static uint64_t suffix_multiplier(const char *s)
{
	const char *u;
	uint64_t base = 1024, mult = 1;
	int i, power;

	if (*s == '\0')
		return 1;
	u = strchr(units, toupper((unsigned char)*s));
	if (!u)
		return strcasecmp(s, "B") ? 0 : 1;
	power = u - units + 1;
	s++;
	if (!strcasecmp(s, "B"))
		base = 1000;
	else if (*s && strcasecmp(s, "iB"))
		return 0;
	for (i = 0; i < power; i++)
		if (__builtin_mul_overflow(mult, base, &mult))
			return 0;
	return mult;
}

int parse_size(const char *str, uint64_t *bytes)
{
	uint64_t whole = 0, part = 0, mult, res;
	const char *p = str, *frac = NULL, *frac_end = NULL, *q;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, *p - '0', &whole))
			return -ERANGE;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -EINVAL;
		for (frac = p; isdigit((unsigned char)*p); p++)
			;
		frac_end = p;
	}
	if (*p == ' ')
		p++;
	mult = suffix_multiplier(p);
	if (!mult)
		return -EINVAL;
	if (__builtin_mul_overflow(whole, mult, &res))
		return -ERANGE;
	/*
	 * The fraction of the unit, exactly, from its last digit up:
	 * part = (digit * mult + part) / 10 keeps part below mult, and
	 * digit * mult + part < 10 * mult <= 10 EiB fits in 64 bits.
	 */
	for (q = frac_end; frac && q > frac; q--)
		part = ((uint64_t)(q[-1] - '0') * mult + part) / 10;
	if (__builtin_add_overflow(res, part, &res))
		return -ERANGE;
	*bytes = res;
	return 0;
}

char *size_to_human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const names[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"
	};
	unsigned int exp = 0;
	uint64_t whole, rem, tenths;

	while (exp < 6 && bytes >> (10 * (exp + 1)))
		exp++;
	if (exp == 0) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	whole = bytes >> (10 * exp);
	rem = bytes & ((1ULL << (10 * exp)) - 1);
	/*
	 * Round the remainder to one decimal: (rem * 10 + half) / unit,
	 * where rem * 10 + half < 10.5 EiB fits in 64 bits.
	 */
	tenths = (rem * 10 + (1ULL << (10 * exp - 1))) >> (10 * exp);
	if (tenths >= 10) {
		whole++;
		tenths = 0;
		/* 1024 of a unit is one of the next: "1 MiB", not "1024 KiB" */
		if (whole == 1024 && exp < 6) {
			whole = 1;
			exp++;
		}
	}
	if (tenths)
		snprintf(buf, len, "%llu.%llu %s", (unsigned long long)whole,
			 (unsigned long long)tenths, names[exp]);
	else
		snprintf(buf, len, "%llu %s", (unsigned long long)whole,
			 names[exp]);
	return buf;
}
