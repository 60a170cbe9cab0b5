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
	uint64_t whole = 0, frac = 0, frac_div = 1, mult, res;
	const char *p = str;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, *p - '0', &whole))
			return -ERANGE;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -EINVAL;
		/* digits past the 18th cannot matter for a 64-bit result */
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_div >= 100000000000000000ULL)
				continue;
			frac = frac * 10 + (*p - '0');
			frac_div *= 10;
		}
	}
	if (*p == ' ')
		p++;
	mult = suffix_multiplier(p);
	if (!mult)
		return -EINVAL;
	if (__builtin_mul_overflow(whole, mult, &res))
		return -ERANGE;
	/* fraction: frac / frac_div of the unit, without overflowing */
	if (frac) {
		uint64_t part = mult / frac_div * frac +
				(mult % frac_div) * frac / frac_div;

		if (__builtin_add_overflow(res, part, &res))
			return -ERANGE;
	}
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
	/* round the remainder to one decimal: (rem * 10 + half) / unit */
	tenths = (rem / (1ULL << (10 * exp - 10)) * 10 + 512) / 1024;
	if (tenths >= 10) {
		whole++;
		tenths = 0;
	}
	if (tenths)
		snprintf(buf, len, "%llu.%llu %s", (unsigned long long)whole,
			 (unsigned long long)tenths, names[exp]);
	else
		snprintf(buf, len, "%llu %s", (unsigned long long)whole,
			 names[exp]);
	return buf;
}
