// RE2's full match (C++, the library Envoy's safe_regex uses, default options: UTF-8 mode) of one
// regular expression against byte strings, for the unit tier's check of the valid-UTF-8 matcher.
// Usage: full-match '<regex>' < lines of hex-encoded inputs; prints 1 (match) or 0 per line, or
// exits 2 when the expression does not compile.
#include <re2/re2.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: full-match <regex>\n";
    return 2;
  }
  RE2 re(argv[1]);
  if (!re.ok()) {
    std::cerr << "does not compile: " << re.error() << "\n";
    return 2;
  }
  std::string hex;
  while (std::getline(std::cin, hex)) {
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    std::cout << (RE2::FullMatch(bytes, re) ? '1' : '0') << '\n';
  }
  return 0;
}
