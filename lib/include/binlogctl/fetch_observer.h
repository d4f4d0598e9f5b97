// What `fetch` tells a reader of the directory it writes, as it writes it: the seam between
// fetch (lib/src/remote, needs libmariadb) and `serve --upstream`'s relay (lib/src/serve), which
// keeps the events fetch just received in memory for the replicas near the live end.
//
// Every call comes from fetch's own thread, in stream order.
#pragma once

#include <binlogctl/bytes.h>

#include <cstdint>
#include <string>

namespace binlogctl {

class FetchObserver {
 public:
  virtual ~FetchObserver() = default;
  // The server's file `name` begins (fetch writes its magic; its events follow).
  virtual void on_file(const std::string& name) = 0;
  // One event of `file` at `pos`, through verify's checks, as it is written there: exactly the
  // bytes the file holds at [pos, pos + raw.size()) once on_written() passes them. `raw` is
  // valid during the call. Events come when fetch writes its buffer: at transaction boundaries,
  // so that a transaction comes whole (as a primary sends it), unless it passes fetch's 1 MiB
  // write buffer; the unfinished transaction of a server that went away is never told (fetch
  // drops it, and a failover goes on from the transaction before it).
  virtual void on_event(const std::string& file, std::uint64_t pos, Bytes raw) = 0;
  // The file (NAME.partial or NAME) holds every byte below `end`: a reader of the file sees them.
  virtual void on_written(const std::string& file, std::uint64_t end) = 0;
  // At a transaction boundary, with everything received written: the observer may hold fetch
  // here (it then reads nothing from the server: back-pressure through TCP) until it returns.
  // False asks fetch to stop.
  virtual bool at_boundary() = 0;
  // fetch reads `server` ("host:port" or a socket path) from now on; `failover`: it went on with
  // it after another server of --upstream was lost (the directory's history goes on there).
  virtual void on_server(const std::string& server, bool failover) {
    (void)server;
    (void)failover;
  }
};

}  // namespace binlogctl
