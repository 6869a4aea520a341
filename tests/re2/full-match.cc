// RE2 (C++, the library Envoy's safe_regex uses, default options: UTF-8 mode) for the unit tier.
//   full-match '<regex>' < lines of hex-encoded inputs: prints 1 (a full match) or 0 per line, or
//     exits 2 when the expression does not compile.
//   full-match --program-size < lines of regular expressions: prints each one's program size, the
//     measure Envoy compares with the runtime key re2.max_program_size.error_level (-1: does not
//     compile).
#include <re2/re2.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: full-match <regex> | full-match --program-size\n";
    return 2;
  }
  std::string line;
  if (std::string(argv[1]) == "--program-size") {
    while (std::getline(std::cin, line)) {
      RE2 re(line);
      std::cout << (re.ok() ? re.ProgramSize() : -1) << '\n';
    }
    return 0;
  }
  RE2 re(argv[1]);
  if (!re.ok()) {
    std::cerr << "does not compile: " << re.error() << "\n";
    return 2;
  }
  while (std::getline(std::cin, line)) {
    std::string bytes;
    for (size_t i = 0; i + 1 < line.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16)));
    std::cout << (RE2::FullMatch(bytes, re) ? '1' : '0') << '\n';
  }
  return 0;
}
