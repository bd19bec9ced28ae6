//===- ReportHtml.cpp - OUT/report.html from the compile report -----------===//
//
// The page is ReportHtmlPage (ReportHtmlTemplate.h) with the report's JSON,
// the very object written as report.json, embedded in a JSON script block
// beside the accuracy report; its inline script draws the charts. Every '<'
// inside the data is written as \u003c so no layer name can close the block.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Report.h"

#include "ReportHtmlTemplate.h"

namespace npucc::driver {

std::string reportHtml(const CompileReport &rep, const nlohmann::json &accuracy) {
  nlohmann::json data = {{"report", reportJson(rep)}, {"accuracy", accuracy}};
  std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(json.size());
  for (char c : json)
    safe += c == '<' ? std::string("\\u003c") : std::string(1, c);
  std::string page = ReportHtmlPage;
  const std::string mark = "NPUCC_DATA_JSON";
  size_t at = page.find(mark);
  return page.substr(0, at) + safe + page.substr(at + mark.size());
}

} // namespace npucc::driver
