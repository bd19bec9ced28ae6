//===- main.cpp - npucc command-line driver (placeholder) -----------------===//
#include <cstdio>
int main() {
  std::puts("npucc " NPUCC_VERSION);
  return 0;
}
