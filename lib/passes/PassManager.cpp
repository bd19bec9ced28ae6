//===- PassManager.cpp - Pass table, lookup and pipeline runner ------------===//
//
// allPasses() is generated from Passes.def. runPipeline validates every name
// first (an unknown name lists the valid ones), then runs the passes in order,
// printing after the requested ones and verifying after each when asked.
//
//===----------------------------------------------------------------------===//
#include "npucc/passes/Pass.h"

#include "npucc/ir/Printer.h"
#include "npucc/ir/Verifier.h"

#include <algorithm>

namespace npucc::passes {

#define NPUCC_PASS(NAME, SUMMARY, FN) Status FN(ir::Graph &, PassContext &);
#include "npucc/passes/Passes.def"

const std::vector<PassInfo> &allPasses() {
  static const std::vector<PassInfo> Table = {
#define NPUCC_PASS(NAME, SUMMARY, FN) {NAME, SUMMARY, &FN},
#include "npucc/passes/Passes.def"
  };
  return Table;
}

const PassInfo *findPass(const std::string &name) {
  for (const PassInfo &p : allPasses())
    if (name == p.name)
      return &p;
  return nullptr;
}

const char *defaultPipeline() {
  return "fold-qdq,remove-identity,constant-fold,fold-pad,fold-batchnorm,fuse-activation,dce";
}

namespace {

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> splitNames(const std::string &list) {
  std::vector<std::string> r;
  size_t start = 0;
  for (;;) {
    size_t comma = list.find(',', start);
    std::string item = trim(list.substr(start, comma == std::string::npos ? std::string::npos
                                                                          : comma - start));
    if (!item.empty())
      r.push_back(item);
    if (comma == std::string::npos)
      return r;
    start = comma + 1;
  }
}

std::string validNames() {
  std::string s;
  for (const PassInfo &p : allPasses())
    s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

Diagnostic unknownPass(const std::string &name, const char *what) {
  return error(std::string("unknown pass '") + name + "'" + what +
               " (valid passes: " + validNames() + ")");
}

} // namespace

Status runPipeline(ir::Graph &g, const std::string &pipeline, PassContext &ctx) {
  std::vector<const PassInfo *> passes;
  for (const std::string &name : splitNames(pipeline)) {
    const PassInfo *p = findPass(name);
    if (!p)
      return unknownPass(name, "");
    passes.push_back(p);
  }
  bool printAll = false;
  for (const std::string &name : ctx.printAfter) {
    if (name == "all")
      printAll = true;
    else if (!findPass(name) && std::find(ctx.laterPassNames.begin(), ctx.laterPassNames.end(),
                                          name) == ctx.laterPassNames.end())
      return unknownPass(name, " in --print-after");
  }
  for (const PassInfo *p : passes) {
    Status s = p->run(g, ctx);
    if (!s) {
      Diagnostic d = s.error();
      d.inFile(g.sourceFile);
      d.note(std::string("while running pass '") + p->name + "'");
      return d;
    }
    bool print = printAll || std::find(ctx.printAfter.begin(), ctx.printAfter.end(),
                                       p->name) != ctx.printAfter.end();
    if (print && ctx.printOut) {
      ir::PrintOptions opts;
      opts.elideAbove = 16;
      *ctx.printOut << "// -----// IR after " << p->name << " //----- //\n";
      ir::printGraph(*ctx.printOut, g, opts);
    }
    if (ctx.verifyEach) {
      Status v = ir::verifyGraph(g);
      if (!v) {
        Diagnostic d = v.error();
        d.message = std::string("IR is invalid after pass '") + p->name + "': " + d.message;
        return d;
      }
    }
  }
  return success();
}

} // namespace npucc::passes
