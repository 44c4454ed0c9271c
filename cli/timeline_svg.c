/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `wakelock timeline --svg FILE`: the asleep/awake timeline drawn from the
 * wake ledger's records (wakes.h).  Three lanes on one CLOCK_BOOTTIME
 * axis: asleep spans, wakes (labelled with their cause), claims (at their
 * latency after the wake; a red mark for a wake nobody claimed).
 */
#include <errno.h>
#include <string.h>
#include "lib/wl_json.h"
#include "wakes.h"

/* Length of the well-formed UTF-8 sequence at s[0..n), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07u;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0u) != 0x80u)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF; and the two
	 * non-characters XML excludes. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

void svg_xml_text(FILE *f, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, max);

	while (n) {
		size_t l = utf8_seq(p, n);

		if (l == 1 && (*p < 0x20 || *p == 0x7f))
			l = 0;
		if (!l) {
			fprintf(f, "\\x%02x", *p);
			l = 1;
		} else if (*p == '&') {
			fputs("&amp;", f);
		} else if (*p == '<') {
			fputs("&lt;", f);
		} else if (*p == '>') {
			fputs("&gt;", f);
		} else if (*p == '"') {
			fputs("&quot;", f);
		} else if (*p == '\'') {
			fputs("&apos;", f);
		} else if (*p == '\\') {
			fputs("\\\\", f);    /* so that \xHH above stays unambiguous */
		} else {
			fwrite(p, 1, l, f);
		}
		p += l;
		n -= l;
	}
}

#define MARGIN 60u
#define LANE_H 24u
#define Y_ASLEEP 40u
#define Y_WAKE 80u
#define Y_CLAIM 150u
#define HEIGHT 200u

struct axis {
	uint64_t t0, span;
	unsigned plot;             /* pixels */
};

/* x of t in tenths of a pixel. */
static unsigned long long x10(const struct axis *a, uint64_t t)
{
	unsigned __int128 d = t > a->t0 ? t - a->t0 : 0;

	if (d > a->span)
		d = a->span;
	return MARGIN * 10ull + (unsigned long long)(d * a->plot * 10u / a->span);
}

static void px(FILE *f, unsigned long long v)
{
	fprintf(f, "%llu.%llu", v / 10u, v % 10u);
}

static void ms_text(FILE *f, uint64_t ns)
{
	fprintf(f, "%llu.%03llu ms", (unsigned long long)(ns / 1000000u),
	        (unsigned long long)(ns / 1000u % 1000u));
}

int timeline_svg(FILE *f, const struct wl_ledger_record *r, size_t n, unsigned width)
{
	struct axis a;
	uint64_t t1 = 0;

	if (!n)
		return -EINVAL;
	if (width < 2 * MARGIN + 100u)
		width = 1000u;
	a.t0 = r[0].start_boot_ns;
	for (size_t i = 0; i < n; i++) {
		uint64_t e = r[i].end_boot_ns > r[i].start_boot_ns ? r[i].end_boot_ns : r[i].start_boot_ns;

		if (r[i].start_boot_ns < a.t0)
			a.t0 = r[i].start_boot_ns;
		if (r[i].nclaims)
			e += r[i].claims[r[i].nclaims - 1].latency_ns;
		if (e > t1)
			t1 = e;
	}
	a.span = t1 > a.t0 ? t1 - a.t0 : 1;
	a.plot = width - 2 * MARGIN;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
	        "viewBox=\"0 0 %u %u\" font-family=\"sans-serif\" font-size=\"10\">\n"
	        "<title>wakelockd: %zu suspend attempts</title>\n"
	        "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#ffffff\"/>\n"
	        "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" fill=\"#fff4c2\"/>\n"
	        "<text x=\"4\" y=\"%u\">asleep</text>\n<text x=\"4\" y=\"%u\">wakes</text>\n"
	        "<text x=\"4\" y=\"%u\">claims</text>\n",
	        width, HEIGHT, width, HEIGHT, n, width, HEIGHT, MARGIN, Y_ASLEEP, a.plot, LANE_H,
	        Y_ASLEEP + 16u, Y_WAKE + 16u, Y_CLAIM + 16u);

	for (size_t i = 0; i < n; i++) {
		const struct wl_ledger_record *p = &r[i];
		unsigned long long xs = x10(&a, p->start_boot_ns), xe = x10(&a, p->end_boot_ns);
		char key[WL_LEDGER_CAUSE_MAX], nb[16];
		unsigned nc = p->nclaims < WL_LEDGER_CLAIMS ? p->nclaims : WL_LEDGER_CLAIMS;

		wl_ledger_cause_key(p, key, sizeof(key));
		if (p->outcome == WL_LO_RESUMED) {
			/* Asleep span, at least a pixel wide to stay visible. */
			fputs("<rect class=\"asleep\" x=\"", f);
			px(f, xs);
			fputs("\" y=\"", f);
			fprintf(f, "%u\" width=\"", Y_ASLEEP);
			px(f, xe > xs + 10 ? xe - xs : 10);
			fprintf(f, "\" height=\"%u\" fill=\"#34495e\"><title>#%llu asleep ", LANE_H,
			        (unsigned long long)p->seq);
			ms_text(f, p->asleep_ns);
			fputs("</title></rect>\n", f);
		}
		if (p->outcome == WL_LO_OPEN)
			continue;
		/* The wake (or the abort, or the failure) at the attempt's end. */
		fprintf(f, "<g class=\"%s\"><title>#%llu %s", wl_ledger_outcome_name(p->outcome),
		        (unsigned long long)p->seq, wl_ledger_outcome_name(p->outcome));
		if (p->err)
			fprintf(f, " %s", wl_errno_name(p->err, nb, sizeof(nb)));
		fputs(": ", f);
		svg_xml_text(f, key, sizeof(key));
		for (unsigned k = 1; k < p->nsources && k < WL_LEDGER_SOURCES; k++) {
			fputs(", ", f);
			svg_xml_text(f, p->sources[k], WL_LEDGER_SRC_NAME);
		}
		fputs("</title><line x1=\"", f);
		px(f, xe);
		fprintf(f, "\" y1=\"%u\" x2=\"", Y_WAKE);
		px(f, xe);
		fprintf(f, "\" y2=\"%u\" stroke=\"%s\" stroke-width=\"1\"/><text x=\"",
		        Y_WAKE + LANE_H,
		        p->outcome == WL_LO_RESUMED ? "#2471a3" : p->outcome == WL_LO_ABORTED
		                ? "#e67e22" : "#c0392b");
		px(f, xe + 20);
		fprintf(f, "\" y=\"%u\">", Y_WAKE + LANE_H + 12u);
		svg_xml_text(f, key, sizeof(key));
		fputs("</text></g>\n", f);

		for (unsigned k = 0; k < nc; k++) {
			fputs("<circle class=\"claim\" cx=\"", f);
			px(f, x10(&a, p->end_boot_ns + p->claims[k].latency_ns));
			fprintf(f, "\" cy=\"%u\" r=\"4\" fill=\"#27ae60\"><title>#%llu claimed by ",
			        Y_CLAIM + LANE_H / 2u, (unsigned long long)p->seq);
			svg_xml_text(f, p->claims[k].client, WAKELOCK_NAME_MAX);
			fputc('/', f);
			svg_xml_text(f, p->claims[k].hold, WAKELOCK_NAME_MAX);
			fputs(" after ", f);
			ms_text(f, p->claims[k].latency_ns);
			fputs("</title></circle>\n", f);
		}
		if (p->claim_state == WL_LCS_UNCLAIMED) {
			fputs("<rect class=\"unclaimed\" x=\"", f);
			px(f, xe > 30 ? xe - 30 : 0);
			fprintf(f, "\" y=\"%u\" width=\"6\" height=\"6\" fill=\"#c0392b\">"
			        "<title>#%llu unclaimed: ", Y_CLAIM + LANE_H / 2u - 3u,
			        (unsigned long long)p->seq);
			svg_xml_text(f, key, sizeof(key));
			fputs("</title></rect>\n", f);
		}
	}
	fprintf(f, "<text x=\"%u\" y=\"%u\">%llu.%03llu s</text>\n"
	        "<text x=\"%u\" y=\"%u\" text-anchor=\"end\">%llu.%03llu s (CLOCK_BOOTTIME)</text>\n"
	        "</svg>\n",
	        MARGIN, HEIGHT - 8u, (unsigned long long)(a.t0 / 1000000000u),
	        (unsigned long long)(a.t0 / 1000000u % 1000u), width - MARGIN, HEIGHT - 8u,
	        (unsigned long long)(t1 / 1000000000u), (unsigned long long)(t1 / 1000000u % 1000u));
	return 0;
}
