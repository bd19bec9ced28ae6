//===- AccuracyFormat.cpp - Text table and JSON of the accuracy report ----===//
//
// formatReport prints fixed-width columns (name column as wide as the
// longest name) with fixed precision, so the text is deterministic for a
// given report; reportJson writes the same numbers with nlohmann::json
// (non-finite SNRs as the strings "inf" / "-inf", JSON has no infinity).
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Accuracy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace npucc::quant {

namespace {

std::string fmt(const char *f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string snrText(double db) {
  if (std::isinf(db))
    return db > 0 ? "inf" : "-inf";
  return fmt("%.2f", db);
}

std::string top1Text(const TensorAccuracy &t) {
  if (!t.classifier)
    return "-";
  return std::to_string(t.top1Agree) + "/" + std::to_string(t.top1Rows) + " (" +
         fmt("%.1f", 100.0 * t.top1()) + "%)";
}

std::string pad(const std::string &s, size_t w, bool right = false) {
  if (s.size() >= w)
    return s;
  std::string sp(w - s.size(), ' ');
  return right ? sp + s : s + sp;
}

void table(std::string &out, const std::vector<TensorAccuracy> &rows) {
  size_t nameW = 4, opW = 2, shapeW = 5;
  for (const auto &r : rows) {
    nameW = std::max(nameW, r.name.size());
    opW = std::max(opW, r.op.size() + 1 + r.qtype.size());
    shapeW = std::max(shapeW, ir::shapeStr(r.shape).size());
  }
  out += "  " + pad("name", nameW) + "  " + pad("op", opW) + "  " + pad("shape", shapeW) + "  " +
         pad("SNR dB", 8, true) + "  " + pad("cosine", 9, true) + "  " +
         pad("max abs err", 11, true) + "  top-1\n";
  for (const auto &r : rows)
    out += "  " + pad(r.name, nameW) + "  " + pad(r.op + " " + r.qtype, opW) + "  " +
           pad(ir::shapeStr(r.shape), shapeW) + "  " + pad(snrText(r.snrDb), 8, true) + "  " +
           pad(fmt("%.6f", r.cosine), 9, true) + "  " + pad(fmt("%.4e", r.maxAbsError), 11, true) +
           "  " + top1Text(r) + "\n";
}

nlohmann::json rowJson(const TensorAccuracy &r) {
  nlohmann::json j;
  j["name"] = r.name;
  j["op"] = r.op;
  j["quantized_type"] = r.qtype;
  j["shape"] = r.shape;
  j["elements"] = r.elements;
  if (std::isinf(r.snrDb))
    j["snr_db"] = r.snrDb > 0 ? "inf" : "-inf";
  else
    j["snr_db"] = r.snrDb;
  j["cosine"] = r.cosine;
  j["max_abs_error"] = r.maxAbsError;
  if (r.classifier) {
    j["top1_agreement"] = r.top1();
    j["top1_rows"] = r.top1Rows;
    j["top1_agreeing"] = r.top1Agree;
  }
  return j;
}

} // namespace

std::string formatReport(const AccuracyReport &r) {
  std::string out = "Accuracy: float vs int8 over " + std::to_string(r.sampleNames.size()) +
                    " sample(s)";
  if (!r.samplesOrigin.empty())
    out += " from " + r.samplesOrigin;
  out += "\n";
  out += "SNR dB = 10 log10(sum ref^2 / sum (ref - q)^2) over all samples (inf: no error); "
         "top-1: rows of [N, C] values whose argmax agrees\n";
  out += "Outputs\n";
  table(out, r.outputs);
  if (r.perLayer) {
    out += "Layers (float values matched by name, quantized graph order)\n";
    if (r.layers.empty())
      out += "  (none)\n";
    else
      table(out, r.layers);
    for (const auto &s : r.skipped)
      out += "  not compared: " + s + "\n";
  }
  if (!r.constrainedBy.empty()) {
    out += "Quantized for the target '" + r.constrainedBy + "' (what its requantizer accepts):\n";
    for (const auto &c : r.constraints)
      out += "  " + c + "\n";
    out += "The same calibration without these constraints (per-channel weights, any scales)\n";
    table(out, r.unconstrainedOutputs);
    for (size_t k = 0; k < r.outputs.size() && k < r.unconstrainedOutputs.size(); ++k) {
      const TensorAccuracy &c = r.outputs[k], &u = r.unconstrainedOutputs[k];
      out += "  cost of the constraints on " + c.name + ": SNR " + snrText(u.snrDb) + " -> " +
             snrText(c.snrDb) + " dB";
      if (std::isfinite(u.snrDb) && std::isfinite(c.snrDb))
        out += " (" + fmt("%+.2f", c.snrDb - u.snrDb) + " dB)";
      if (c.classifier && u.classifier)
        out += ", top-1 " + fmt("%.1f", 100.0 * u.top1()) + "% -> " + fmt("%.1f", 100.0 * c.top1()) +
               "%";
      out += "\n";
    }
  }
  out += "Ops left in float (quantize/dequantize at their boundaries):";
  if (r.floatOps.empty())
    out += " none\n";
  else {
    out += "\n";
    for (const auto &o : r.floatOps)
      out += "  " + o + "\n";
  }
  return out;
}

std::string reportJson(const AccuracyReport &r) {
  nlohmann::json j;
  j["samples_origin"] = r.samplesOrigin;
  j["samples"] = r.sampleNames;
  j["outputs"] = nlohmann::json::array();
  for (const auto &o : r.outputs)
    j["outputs"].push_back(rowJson(o));
  if (r.perLayer) {
    j["layers"] = nlohmann::json::array();
    for (const auto &l : r.layers)
      j["layers"].push_back(rowJson(l));
    j["not_compared"] = r.skipped;
  }
  j["float_ops"] = r.floatOps;
  if (!r.constrainedBy.empty()) {
    nlohmann::json t;
    t["target"] = r.constrainedBy;
    t["constraints"] = r.constraints;
    t["unconstrained_outputs"] = nlohmann::json::array();
    for (const auto &o : r.unconstrainedOutputs)
      t["unconstrained_outputs"].push_back(rowJson(o));
    j["target_constraints"] = t;
  }
  return j.dump(2) + "\n";
}

} // namespace npucc::quant
