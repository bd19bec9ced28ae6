/* npucc_types.h - Types shared by generated programs and the runtime (C99). */
#ifndef NPUCC_TYPES_H
#define NPUCC_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* Element types of model inputs and outputs, as in ONNX's TensorProto. */
typedef enum {
  NPUCC_F32 = 1,
  NPUCC_U8 = 2,
  NPUCC_I8 = 3,
  NPUCC_U16 = 4,
  NPUCC_I16 = 5,
  NPUCC_I32 = 6,
  NPUCC_I64 = 7,
  NPUCC_BOOL = 9,
  NPUCC_F64 = 11,
  NPUCC_U32 = 12,
  NPUCC_U64 = 13
} npucc_dtype;

/* Description of one model input or output. */
typedef struct {
  const char *name;
  npucc_dtype dtype;
  int32_t rank;
  const int32_t *shape;
  size_t bytes;
} npucc_tensor_info;

/* Return code of <prefix>_run on success. A program that drives an NPU
 * returns the NPU runtime's negative codes otherwise (NPUCC_ERR_* in
 * npucc_hal.h: a command the NPU cannot take, a wait that timed out, a device
 * error). */
#define NPUCC_OK 0

#endif /* NPUCC_TYPES_H */
