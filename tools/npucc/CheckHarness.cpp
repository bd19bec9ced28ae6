//===- CheckHarness.cpp - The main() that `npucc check` builds ------------===//
//
// npucc_check_main.c: reads the raw inputs a check writes, runs the model (on
// the target's host simulator for NPU programs), writes the raw outputs and
// the simulator's figures. It is built with the user's --cflags, so it must be
// warning-free C99 under -Wall -Wextra -Werror -pedantic (cli_test.sh and
// check_cli_test.sh build it so on every target). With --arena external it
// allocates the arena (aligned to <PREFIX>_ARENA_ALIGN), calls <prefix>_init
// and, on an error, prints the failing layer from <prefix>_last_error; on an NPU
// program, where the layer's command stream stopped (npucc_stream_last_fault).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "npucc/codegen/CEmitter.h"

#include <cctype>
#include <sstream>

namespace npucc::tool {

std::string checkHarnessSource(const std::string &prefix, bool sim, bool ext) {
  std::string p = prefix;
  std::string P;
  for (char c : prefix)
    P += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::ostringstream s;
  s << "/* npucc check harness: reads raw inputs, runs the model, writes raw outputs. */\n"
    << "#include <stdio.h>\n#include <stdlib.h>\n#include \"" << p << ".h\"\n";
  if (sim)
    s << "#include \"npucc_hal.h\"\n#include \"npucc_sim.h\"\n#include \"npucc_stream.h\"\n"
      << "#include \"npucc_target.h\"\n";
  s << "\nint main(int argc, char **argv) {\n"
    << "  const void *in[" << P << "_NUM_INPUTS + 1];\n"
    << "  void *out[" << P << "_NUM_OUTPUTS + 1];\n"
    << "  int i, rc;\n";
  if (ext)
    s << "  " << p << "_ctx ctx;\n  int32_t layer;\n  const char *layer_name;\n"
      << "  unsigned char *arena_raw = (unsigned char *)malloc(" << P << "_ARENA_BYTES + " << P
      << "_ARENA_ALIGN);\n"
      << "  unsigned char *arena = arena_raw + ((" << P << "_ARENA_ALIGN - (uintptr_t)arena_raw % "
      << P << "_ARENA_ALIGN) % " << P << "_ARENA_ALIGN);\n";
  if (sim)
    s << "  npucc_sim *sim = npucc_sim_create(NPUCC_TARGET);\n"
      << "  npucc_sim_totals t;\n  FILE *sf;\n"
      << "  if (!sim) return 4;\n"
      << "  npucc_sim_attach(sim);\n"
      << "  npucc_hal_set_wait_hook(npucc_sim_wfi_hook, sim);\n";
  s << "  if (argc != 1 + " << P << "_NUM_INPUTS + " << P << "_NUM_OUTPUTS) {\n"
    << "    fprintf(stderr, \"usage: %s inputs... outputs...\\n\", argv[0]);\n"
    << "    return 2;\n  }\n"
    << "  for (i = 0; i < " << P << "_NUM_INPUTS; ++i) {\n"
    << "    size_t n = " << p << "_inputs[i].bytes;\n"
    << "    void *b = malloc(n ? n : 1);\n"
    << "    FILE *f = fopen(argv[1 + i], \"rb\");\n"
    << "    if (!b || !f || fread(b, 1, n, f) != n) { fprintf(stderr, \"cannot read %s\\n\", "
       "argv[1 + i]); return 2; }\n"
    << "    fclose(f);\n    in[i] = b;\n  }\n"
    << "  for (i = 0; i < " << P << "_NUM_OUTPUTS; ++i) {\n"
    << "    size_t n = " << p << "_outputs[i].bytes;\n"
    << "    out[i] = calloc(n ? n : 1, 1);\n  }\n";
  if (ext)
    s << "  if (!arena_raw) return 2;\n"
      << "  rc = " << p << "_init(&ctx, arena, " << P << "_ARENA_BYTES);\n"
      << "  if (rc == 0) rc = " << p << "_run(&ctx, in, out);\n"
      << "  if (rc != 0 && " << p << "_last_error(&ctx, &layer, &layer_name) == rc)\n"
      << "    fprintf(stderr, \"layer %d (%s) failed\\n\", (int)layer, layer_name);\n"
      << "  free(arena_raw);\n";
  else
    s << "  rc = " << p << "_run(in, out);\n";
  if (sim)
    s << "  npucc_sim_get_totals(sim, &t);\n"
      << "  sf = fopen(\"sim.txt\", \"w\");\n"
      << "  if (!sf) return 2;\n"
      << "  fprintf(sf, \"%llu %.6f %llu %llu %d %llu %llu %llu\\n%s\\n\", (unsigned long "
         "long)t.end_cycles,\n"
      << "          t.mac_utilisation, (unsigned long long)t.sys_bytes_read,\n"
      << "          (unsigned long long)t.sys_bytes_written, npucc_sim_failed(sim),\n"
      << "          (unsigned long long)t.commands, (unsigned long long)t.macs,\n"
      << "          (unsigned long long)t.reg_writes, npucc_sim_error(sim));\n"
      << "  if (fclose(sf) != 0) { fprintf(stderr, \"cannot write sim.txt\\n\"); return 2; }\n"
      << "  {\n    size_t k, n = npucc_sim_num_commands(sim);\n"
      << "    FILE *tf = fopen(\"sim_trace.txt\", \"w\");\n"
      << "    if (!tf) return 2;\n"
      << "    for (k = 0; k < n; ++k) {\n"
      << "      const npucc_sim_cmd_stats *c = npucc_sim_command(sim, k);\n"
      << "      fprintf(tf, \"%d %llu %llu\\n\", c->engine, (unsigned long long)c->start,\n"
      << "              (unsigned long long)c->end);\n"
      << "    }\n"
      << "    if (fclose(tf) != 0) { fprintf(stderr, \"cannot write sim_trace.txt\\n\"); return 2; "
         "}\n"
      << "  }\n"
      << "  if (npucc_sim_failed(sim)) { fprintf(stderr, \"simulator: %s\\n\", "
         "npucc_sim_error(sim)); "
         "return 5; }\n";
  s << "  if (rc != 0) {\n    fprintf(stderr, \"" << p << "_run returned %d\\n\", rc);\n"
    << (sim ? codegen::npuFaultReport("stderr") : std::string()) << "    return 3;\n  }\n"
    << "  for (i = 0; i < " << P << "_NUM_OUTPUTS; ++i) {\n"
    << "    size_t n = " << p << "_outputs[i].bytes;\n"
    << "    FILE *f = fopen(argv[1 + " << P << "_NUM_INPUTS + i], \"wb\");\n"
    << "    if (!f || fwrite(out[i], 1, n, f) != n || fclose(f) != 0) {\n"
    << "      fprintf(stderr, \"cannot write %s\\n\", argv[1 + " << P << "_NUM_INPUTS + i]);\n"
    << "      return 2;\n    }\n  }\n"
    << "  for (i = 0; i < " << P << "_NUM_INPUTS; ++i) free((void *)in[i]);\n"
    << "  for (i = 0; i < " << P << "_NUM_OUTPUTS; ++i) free(out[i]);\n"
    << "  return 0;\n}\n";
  return s.str();
}

} // namespace npucc::tool
