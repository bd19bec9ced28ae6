//===- TargetParseFields.cpp - Target description: computed fields --------===//
//
// A command's "fields": field -> integer constant, expression over the
// semantic parameters (npucc/target/Expr.h) or {"cases": [{"when": {...},
// "value": N}]}. An expression `p`, `p - c` or `p + c` of a parameter no
// other binding holds becomes that parameter's binding (minus c), exactly as
// if written in "params"; everything else is computed after the parameter
// bindings and checked by the simulator. The checks: no field written twice
// (with params, select and doorbell), every parameter a field reads applies
// to the command and is recoverable by the simulator (bound, fixed, or in a
// cases table it decodes), constants fit, an expression can fit its field
// for some values the command carries, cases tables cover every capability
// the operation lists.
//
//===----------------------------------------------------------------------===//
#include "TargetParser.h"

#include "../../runtime/hal/npucc_params.h"

#include <algorithm>
#include <map>

namespace npucc::target {

using namespace json_reader;

namespace {

uint64_t fieldMax(const FieldRef &f) {
  return f.width >= 64 ? UINT64_MAX : (uint64_t(1) << f.width) - 1;
}

std::string rangeText(const FieldRef &f) {
  return std::to_string(f.width) + "-bit field " + shortQuote(f.text) + " (0.." +
         std::to_string(fieldMax(f)) + ")";
}

/// The capability list the operation gives for a parameter, if any.
const std::vector<int> *capabilities(const OpLimits *l, int id, std::vector<int> &kinds) {
  if (!l)
    return nullptr;
  switch (id) {
  case NPUCC_P_K_H:
    return &l->kernelHeights;
  case NPUCC_P_K_W:
    return &l->kernelWidths;
  case NPUCC_P_STRIDE_H:
  case NPUCC_P_STRIDE_W:
    return &l->strides;
  case NPUCC_P_DIL_H:
  case NPUCC_P_DIL_W:
    return l->dilations.empty() ? nullptr : &l->dilations;
  case NPUCC_P_DEPTH_MULT:
    return &l->depthMultipliers;
  case NPUCC_P_POOL_KIND:
    for (const std::string &k : l->kinds)
      kinds.push_back(k == "avg" ? NPUCC_POOL_AVG : NPUCC_POOL_MAX);
    return kinds.empty() ? nullptr : &kinds;
  default:
    return nullptr;
  }
}

/// A selector parameter's value by name in a cases condition ("pool_kind":
/// "max"); other parameters take integers.
int64_t namedValue(int id, const nlohmann::json &v, const std::string &path) {
  static const struct {
    int param;
    const char *name;
    int64_t value;
  } Names[] = {{NPUCC_P_POOL_KIND, "max", NPUCC_POOL_MAX},
               {NPUCC_P_POOL_KIND, "avg", NPUCC_POOL_AVG},
               {NPUCC_P_ELTWISE_OP, "add", NPUCC_ELTWISE_ADD}};
  std::string s = v.get<std::string>(), list;
  for (const auto &n : Names)
    if (n.param == id) {
      if (s == n.name)
        return n.value;
      list += (list.empty() ? "" : ", ") + std::string(n.name);
    }
  fail(path, list.empty() ? "parameter '" + paramNames()[size_t(id)] + "' takes an integer"
                          : "unknown " + paramNames()[size_t(id)] + " " + shortQuote(s) +
                                " (expected " + list + " or an integer)");
}

} // namespace

void TargetParser::parseFields(const Obj &co, CommandDesc &c, const Claim &claim) const {
  const json *fs = co.opt("fields");
  if (!fs)
    return;
  Obj fo(*fs, co.at("fields"));
  auto checkParam = [&](int id, const std::string &path) {
    if (!paramAllowedFor(id, c.kindId))
      fail(path, "parameter '" + paramNames()[size_t(id)] + "' does not apply to command '" +
                     c.kind + "'");
  };
  for (auto it = fs->begin(); it != fs->end(); ++it) {
    std::string fp = fo.at(it.key());
    fo.opt(it.key());
    FieldBinding b;
    b.path = fp;
    b.field = fieldRef(json(it.key()), fp);
    const json &v = it.value();
    if (v.is_number_integer()) {
      int64_t k = toI64(v, fp);
      if (k < 0 || uint64_t(k) > fieldMax(b.field))
        fail(fp, "constant " + std::to_string(k) + " does not fit " + rangeText(b.field));
      b.expr.value = k;
    } else if (v.is_string()) {
      ExprError err;
      std::optional<Expr> e = parseExpr(v.get<std::string>(), err);
      if (!e)
        fail(fp, "column " + std::to_string(err.column) + ": " + err.message + " in " +
                     shortQuote(v.get<std::string>()));
      b.expr = std::move(*e);
      for (int id : exprParams(b.expr))
        checkParam(id, fp);
    } else if (v.is_object()) {
      Obj vo(v, fp);
      const json &cs = vo.array("cases");
      vo.done();
      if (cs.empty())
        fail(vo.at("cases"), "expected at least one case");
      b.isCases = true;
      for (size_t i = 0; i < cs.size(); ++i) {
        std::string cp = vo.at("cases") + "/" + std::to_string(i);
        Obj ko(cs[i], cp);
        FieldCase fc;
        const json &when = ko.req("when");
        Obj wo(when, ko.at("when"));
        if (!when.is_object() || when.empty())
          fail(ko.at("when"), "expected an object of parameter values");
        for (auto wi = when.begin(); wi != when.end(); ++wi) {
          std::string wp = wo.at(wi.key());
          wo.opt(wi.key());
          int id = paramId(wi.key());
          if (id < 0) {
            std::set<std::string> names(paramNames().begin(), paramNames().end());
            std::string near = closest(wi.key(), names);
            fail(wp, "unknown semantic parameter " + shortQuote(wi.key()) +
                         (near.empty() ? "" : " (did you mean '" + near + "'?)"));
          }
          checkParam(id, wp);
          fc.when.push_back({id, wi.value().is_string() ? namedValue(id, wi.value(), wp)
                                                        : toI64(wi.value(), wp)});
        }
        int64_t val = toI64(ko.req("value"), ko.at("value"));
        if (val < 0 || uint64_t(val) > fieldMax(b.field))
          fail(ko.at("value"),
               "value " + std::to_string(val) + " does not fit " + rangeText(b.field));
        fc.value = uint64_t(val);
        ko.done();
        for (size_t j = 0; j < b.cases.size(); ++j)
          if (b.cases[j].when == fc.when)
            fail(cp, "same conditions as case " + std::to_string(j));
        b.cases.push_back(fc);
      }
    } else {
      fail(fp,
           "expected an integer, an expression string or {\"cases\": [...]}, got " + typeName(v));
    }
    claim(b.field, fp);
    // An affine expression of a parameter nothing else holds is its binding.
    if (!b.isCases)
      if (std::optional<std::pair<int, int64_t>> a = exprAffine(b.expr)) {
        const std::string &name = paramNames()[size_t(a->first)];
        if (!c.binding(name) && !c.fixedParam(name)) {
          ParamBinding pb;
          pb.param = name;
          pb.paramId = a->first;
          pb.fields.push_back(b.field);
          pb.minus = a->second;
          pb.fromExpr = printExpr(b.expr);
          c.params.push_back(pb);
          continue;
        }
      }
    c.fields.push_back(std::move(b));
  }
  // A cases table recovers the parameters of its conditions that no binding
  // holds: then every case names the same parameters, with distinct values.
  for (FieldBinding &b : c.fields) {
    if (!b.isCases)
      continue;
    bool need = false;
    for (int id : b.params())
      need |= !c.binding(paramNames()[size_t(id)]) && !c.fixedParam(paramNames()[size_t(id)]) &&
              !c.decodingCases(id);
    if (!need)
      continue;
    std::vector<int> ps = b.params();
    std::sort(ps.begin(), ps.end());
    for (size_t i = 0; i < b.cases.size(); ++i) {
      std::vector<int> mine;
      for (const auto &w : b.cases[i].when)
        mine.push_back(w.first);
      std::sort(mine.begin(), mine.end());
      if (mine != ps)
        fail(b.path + "/cases/" + std::to_string(i),
             "this table is how the simulator recovers its parameters, so every case must name "
             "the same parameters (" +
                 b.text().substr(11) + ")");
      for (size_t j = 0; j < i; ++j)
        if (b.cases[j].value == b.cases[i].value)
          fail(b.path + "/cases/" + std::to_string(i) + "/value",
               "value " + std::to_string(b.cases[i].value) + " is also case " + std::to_string(j) +
                   "'s: the simulator could not tell them apart");
    }
    b.decodes = true;
  }
}

void TargetParser::checkRecoverable(const CommandDesc &c, const std::string &path) const {
  for (const FieldBinding &b : c.fields)
    for (int id : b.params()) {
      const std::string &name = paramNames()[size_t(id)];
      if (!c.binding(name) && !c.fixedParam(name) && !c.decodingCases(id))
        fail(path, "parameter '" + name +
                       "' appears only in expressions; bind it to a field of its own or fix it");
    }
}

void TargetParser::checkFieldBindings() const {
  // The C table counts expression ops, cases and conditions in 16 bits.
  size_t ops = 0, cases = 0, conds = 0;
  for (const CommandDesc &c : T.commands)
    for (const FieldBinding &b : c.fields) {
      ops += b.isCases ? 0 : exprPostfix(b.expr).size();
      cases += b.cases.size();
      for (const FieldCase &fc : b.cases)
        conds += fc.when.size();
      if (ops > 65535 || cases > 65535 || conds > 65535)
        fail(b.path, "the computed fields of this description need more than 65535 expression "
                     "operations, cases or conditions; the runtime's table holds at most 65535");
    }
  for (const CommandDesc &c : T.commands) {
    const OpLimits *l = T.operation(c.kind);
    for (const FieldBinding &b : c.fields) {
      if (b.isCases) {
        // Every combination of the listed capabilities has a case.
        std::vector<int> ps = b.params();
        std::vector<std::vector<int>> lists;
        std::vector<int> listed, kinds;
        for (int id : ps) {
          std::vector<int> k;
          if (const std::vector<int> *cap = capabilities(l, id, k)) {
            listed.push_back(id);
            lists.push_back(*cap);
          }
        }
        std::vector<size_t> idx(lists.size(), 0);
        bool done = std::any_of(lists.begin(), lists.end(),
                                [](const std::vector<int> &v) { return v.empty(); });
        while (!done) {
          bool found = false;
          for (const FieldCase &fc : b.cases) {
            bool ok = true;
            for (const auto &w : fc.when)
              for (size_t i = 0; i < listed.size(); ++i)
                if (w.first == listed[i])
                  ok &= w.second == lists[i][idx[i]];
            found |= ok;
          }
          if (!found) {
            std::string combo;
            for (size_t i = 0; i < listed.size(); ++i)
              combo += (combo.empty() ? "" : ", ") + paramNames()[size_t(listed[i])] + " = " +
                       std::to_string(lists[i][idx[i]]);
            fail(b.path,
                 "no case for " + combo + ", which /compute/operations/" + c.kind + " allows");
          }
          size_t i = 0;
          while (i < idx.size() && ++idx[i] == lists[i].size())
            idx[i++] = 0;
          done = i == idx.size();
        }
        continue;
      }
      // Can the expression fit its field for some values the command carries?
      auto range = [&](int id) {
        const ParamRange &r = T.paramBounds(c.kindId, id);
        Interval iv{r.lo, r.hi, true};
        std::vector<int> k;
        if (const std::vector<int> *cap = capabilities(l, id, k); cap && !cap->empty()) {
          iv.lo = std::max<int64_t>(iv.lo, *std::min_element(cap->begin(), cap->end()));
          iv.hi = std::min<int64_t>(iv.hi, *std::max_element(cap->begin(), cap->end()));
        }
        return iv;
      };
      Interval iv = exprInterval(b.expr, range);
      if (iv.hi < 0 || (iv.lo > 0 && uint64_t(iv.lo) > fieldMax(b.field)))
        fail(b.path, shortQuote(printExpr(b.expr)) + " is " + std::to_string(iv.lo) + ".." +
                         std::to_string(iv.hi) + " for the values command '" + c.kind +
                         "' carries: it never fits " + rangeText(b.field));
    }
  }
}

} // namespace npucc::target
