// binlogctl fetch: a verified, resumable raw backup of a server's binlogs (needs libmariadb:
// built in binlogctl_remote).
//
// Each server file is written into the result directory under its server name, byte for byte as
// the server's file: magic, the server's own format description, every event; the artificial
// events of the replication stream are never written (BinlogFeed drops them). A file being written
// is NAME.partial; it is renamed to NAME (file and directory fsynced) once its ROTATE (or STOP) is on
// disk, so a final name only ever holds a complete file. Every event goes through verify's checks
// (EventStream framing and CRC32, ChainVerifier's chain checks) before it is written; a damaged
// event stops the fetch, is never written, and is reported as verify reports it (exit status 1).
//
// Resuming: started again on the same directory, fetch reads the NAME.partial there (or, when
// there is none, continues after the last complete file), keeps its events up to the end of the
// last complete transaction (a torn tail or a cut transaction is truncated away), and asks the
// server for the rest from that position.
#pragma once

#include <binlogctl/fetch_observer.h>
#include <binlogctl/output.h>
#include <binlogctl/remote.h>
#include <binlogctl/verify.h>

#include <cstdio>
#include <string>

namespace binlogctl {

struct FetchOptions {
  RemoteOptions remote;
  std::string result_dir;
  // The first file when the directory holds none yet (default: the first SHOW BINARY LOGS lists).
  std::string start_file;
  // Seconds between fsyncs (at transaction boundaries); 0: after every transaction.
  double fsync_interval = 1.0;
  OutputFormat format = OutputFormat::text;  // of the findings and the summary (as verify)
  VerifyConfig verify;
  // serve --upstream A,B,...: the servers after `remote` (same user, password and TLS options),
  // for a failover. When the server read cannot be reached, the others are asked in turn to go
  // on after the directory's newest transaction, by MariaDB GTID; a server whose copy of that
  // transaction differs (or that lacks it) is refused. From a failover on, the directory's
  // positions are its own: the later events keep their bytes but for end_log_pos and the CRC32,
  // and every later reconnect goes by GTID (the directory's .binlogctl-failover records it).
  std::vector<RemoteOptions> failover;
  // How long a server asked to go on may take to begin sending its copy of the directory's
  // newest transaction before it is refused and the next one asked (a replica of a dead primary
  // that lacks it would never send it); it is asked again in the next round.
  unsigned failover_wait_seconds = 10;
  // Told of every file, event and write as they happen, and asked at each transaction boundary
  // whether to go on (serve --upstream's relay); must outlive run_fetch.
  FetchObserver* observer = nullptr;
};

// Runs until the server's current end (or, with remote.stop_never, until request_fetch_stop()),
// reconnecting with backoff when the connection drops under --stop-never (each reconnect is
// reported on `err`). Findings and the summary go to `out`. Returns 0, 1 (damage found) or 2
// (the server or the directory cannot be used).
int run_fetch(const FetchOptions& opts, std::FILE* out, std::FILE* err);

// Asks a running run_fetch to stop after the event being written, with every complete event on
// disk and synced. Async-signal-safe (for SIGINT/SIGTERM handlers).
void request_fetch_stop() noexcept;

}  // namespace binlogctl
