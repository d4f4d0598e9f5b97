// The input seam (inputs.h): files from the command line, or bytes in memory.
#include <binlogctl/inputs.h>
#include <binlogctl/source.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace binlogctl {
namespace {

class PathInputs final : public InputSet {
 public:
  explicit PathInputs(const std::vector<std::string>& args) : list_(expand_inputs(args)) {
    for (const InputFile& f : list_.files) {
      if (f.path == "-" || f.missing) continue;
      std::error_code ec;
      const auto sz = std::filesystem::file_size(f.path, ec);
      if (!ec) total_ += sz;
    }
  }
  const InputList& list() const override { return list_; }
  std::uint64_t total_size() const override { return total_; }
  std::unique_ptr<Source> open(const InputFile& f) override { return open_source(f.path); }

 private:
  InputList list_;
  std::uint64_t total_ = 0;
};

class MemoryInputs final : public InputSet {
 public:
  MemoryInputs(std::vector<std::pair<std::string, Bytes>> files, bool as_streams)
      : files_(std::move(files)), as_streams_(as_streams) {
    for (std::size_t i = 0; i < files_.size(); ++i) {
      list_.files.push_back(InputFile{files_[i].first, files_[i].first, false, ""});
      total_ += files_[i].second.size();
    }
  }
  const InputList& list() const override { return list_; }
  std::uint64_t total_size() const override { return as_streams_ ? 0 : total_; }
  std::unique_ptr<Source> open(const InputFile& f) override {
    for (const auto& [name, bytes] : files_) {
      if (name != f.path) continue;
      if (as_streams_) return stream_source(memory_stream(bytes));
      return memory_source(bytes);
    }
    throw std::system_error(std::make_error_code(std::errc::no_such_file_or_directory), f.path);
  }

 private:
  std::vector<std::pair<std::string, Bytes>> files_;
  bool as_streams_;
  InputList list_;
  std::uint64_t total_ = 0;
};

}  // namespace

std::unique_ptr<InputSet> path_inputs(const std::vector<std::string>& args) {
  return std::make_unique<PathInputs>(args);
}

std::unique_ptr<InputSet> memory_inputs(std::vector<std::pair<std::string, Bytes>> files, bool as_streams) {
  return std::make_unique<MemoryInputs>(std::move(files), as_streams);
}

}  // namespace binlogctl
