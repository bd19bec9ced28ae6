/* npucc_eltwise_s8.c - int8 Add/Mul with stride broadcasting, requantizing row copies.
 * The innermost axis runs as a plain loop; outer axes advance an index counter.
 * See npucc_eltwise_s8.h. */
#include "npucc_eltwise_s8.h"
#include "npucc_requant.h"

typedef struct {
  int32_t a_zp, b_zp, left_shift, a_mult, a_shift, b_mult, b_shift, mult, shift, out_zp, lo, hi;
  int32_t is_add;
} npucc_elt_s8_params;

static int8_t npucc_elt_s8_one(const npucc_elt_s8_params *p, int8_t a, int8_t b) {
  if (p->is_add)
    return npucc_add_i8(a, b, p->a_zp, p->b_zp, p->left_shift, p->a_mult, p->a_shift, p->b_mult,
                        p->b_shift, p->mult, p->shift, p->out_zp, p->lo, p->hi);
  return npucc_requant_i8(((int32_t)a - p->a_zp) * ((int32_t)b - p->b_zp), p->mult, p->shift,
                          p->out_zp, p->lo, p->hi);
}

static void npucc_elt_s8_run(const npucc_elt_s8_params *p, const int8_t *A, const int8_t *B,
                             int8_t *Y, int32_t rank, const int32_t *shape, const int32_t *a_str,
                             const int32_t *b_str) {
  int32_t idx[NPUCC_ELT_S8_MAX_RANK];
  int32_t last = rank - 1, inner = shape[last], as = a_str[last], bs = b_str[last], k, j;
  size_t outer = 1, o, ao = 0, bo = 0;
  for (k = 0; k < last; k++) {
    idx[k] = 0;
    outer *= (size_t)shape[k];
  }
  for (o = 0; o < outer; o++) {
    const int8_t *ar = A + ao, *br = B + bo;
    int8_t *yr = Y + o * (size_t)inner;
    if (as == 1 && bs == 1) {
      for (j = 0; j < inner; j++)
        yr[j] = npucc_elt_s8_one(p, ar[j], br[j]);
    } else {
      for (j = 0; j < inner; j++)
        yr[j] = npucc_elt_s8_one(p, ar[(size_t)j * as], br[(size_t)j * bs]);
    }
    for (k = last - 1; k >= 0; k--) { /* advance the outer index */
      idx[k]++;
      ao += (size_t)a_str[k];
      bo += (size_t)b_str[k];
      if (idx[k] < shape[k])
        break;
      ao -= (size_t)a_str[k] * (size_t)shape[k];
      bo -= (size_t)b_str[k] * (size_t)shape[k];
      idx[k] = 0;
    }
  }
}

void npucc_add_s8(const int8_t *A, const int8_t *B, int8_t *Y, int32_t a_zp, int32_t b_zp,
                  int32_t left_shift, int32_t a_mult, int32_t a_shift, int32_t b_mult,
                  int32_t b_shift, int32_t out_mult, int32_t out_shift, int32_t out_zp,
                  int32_t act_min, int32_t act_max, int32_t rank, const int32_t *shape,
                  const int32_t *a_str, const int32_t *b_str) {
  npucc_elt_s8_params p;
  p.a_zp = a_zp;
  p.b_zp = b_zp;
  p.left_shift = left_shift;
  p.a_mult = a_mult;
  p.a_shift = a_shift;
  p.b_mult = b_mult;
  p.b_shift = b_shift;
  p.mult = out_mult;
  p.shift = out_shift;
  p.out_zp = out_zp;
  p.lo = act_min;
  p.hi = act_max;
  p.is_add = 1;
  npucc_elt_s8_run(&p, A, B, Y, rank, shape, a_str, b_str);
}

void npucc_mul_s8(const int8_t *A, const int8_t *B, int8_t *Y, int32_t a_zp, int32_t b_zp,
                  int32_t mult, int32_t shift, int32_t out_zp, int32_t act_min, int32_t act_max,
                  int32_t rank, const int32_t *shape, const int32_t *a_str, const int32_t *b_str) {
  npucc_elt_s8_params p;
  memset(&p, 0, sizeof(p));
  p.a_zp = a_zp;
  p.b_zp = b_zp;
  p.mult = mult;
  p.shift = shift;
  p.out_zp = out_zp;
  p.lo = act_min;
  p.hi = act_max;
  npucc_elt_s8_run(&p, A, B, Y, rank, shape, a_str, b_str);
}

void npucc_requant_rows_s8(const int8_t *X, int8_t *Y, int32_t rows, int32_t row_elems,
                           int32_t y_stride, int32_t y_off, int32_t x_zp, int32_t mult,
                           int32_t shift, int32_t out_zp) {
  int32_t r, j;
  for (r = 0; r < rows; r++) {
    const int8_t *xr = X + (size_t)r * row_elems;
    int8_t *yr = Y + (size_t)y_off + (size_t)r * y_stride;
    for (j = 0; j < row_elems; j++)
      yr[j] = npucc_requant_i8((int32_t)xr[j] - x_zp, mult, shift, out_zp, -128, 127);
  }
}
