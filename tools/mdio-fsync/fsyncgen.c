/* fsyncgen: O_DIRECT random writes with an fsync after every K writes, per thread.
 *
 * fsyncgen -f DEV -t THREADS -b BYTES -k K -n WRITES_PER_THREAD -r REGION_BYTES [-S SEED] [-d]
 *
 * Each thread opens DEV itself (O_RDWR | O_DIRECT), draws BYTES-aligned offsets in
 * [0, REGION) from its own splitmix64 stream, writes them one at a time (queue depth 1, as
 * fio's psync engine), and after every K of its own writes calls fsync (fdatasync with -d)
 * on its descriptor: fio's `rw=randwrite direct=1 fsync=K numjobs=THREADS`. On a block
 * device both calls end in blkdev_fsync -> blkdev_issue_flush: one empty REQ_PREFLUSH bio.
 * Prints one line: FSYNCGEN writes=.. fsyncs=.. bytes=.. secs=..
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *path;
static uint64_t block_bytes, every, per_thread, region_bytes, seed = 1;
static int use_fdatasync;
static _Atomic uint64_t writes_done, fsyncs_done, failures;

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void *thread_main(void *arg) {
  uint64_t index = (uint64_t)(uintptr_t)arg;
  uint64_t state = seed * 0x100000001b3ULL + index * 0x9e37ULL + 7;
  uint64_t slots = region_bytes / block_bytes;
  void *buffer;
  if (posix_memalign(&buffer, 4096, block_bytes)) { perror("posix_memalign"); exit(1); }
  memset(buffer, 0x5a ^ (int)index, block_bytes);
  int fd = open(path, O_RDWR | O_DIRECT);
  if (fd < 0) { perror("open"); exit(1); }
  for (uint64_t i = 1; i <= per_thread; i++) {
    off_t offset = (off_t)((splitmix(&state) % slots) * block_bytes);
    if (pwrite(fd, buffer, block_bytes, offset) != (ssize_t)block_bytes) atomic_fetch_add(&failures, 1);
    else atomic_fetch_add(&writes_done, 1);
    if (i % every == 0) {
      int rc = use_fdatasync ? fdatasync(fd) : fsync(fd);
      if (rc) atomic_fetch_add(&failures, 1);
      else atomic_fetch_add(&fsyncs_done, 1);
    }
  }
  close(fd);
  free(buffer);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 1, option;
  while ((option = getopt(argc, argv, "f:t:b:k:n:r:S:d")) != -1) {
    switch (option) {
      case 'f': path = optarg; break;
      case 't': threads = atoi(optarg); break;
      case 'b': block_bytes = strtoull(optarg, 0, 0); break;
      case 'k': every = strtoull(optarg, 0, 0); break;
      case 'n': per_thread = strtoull(optarg, 0, 0); break;
      case 'r': region_bytes = strtoull(optarg, 0, 0); break;
      case 'S': seed = strtoull(optarg, 0, 0); break;
      case 'd': use_fdatasync = 1; break;
      default: fprintf(stderr, "usage: see the header of fsyncgen.c\n"); return 2;
    }
  }
  if (!path || threads < 1 || threads > 1024 || !block_bytes || block_bytes % 4096 || !every ||
      !per_thread || region_bytes < block_bytes) {
    fprintf(stderr, "fsyncgen: bad arguments\n");
    return 2;
  }
  pthread_t *ids = calloc((size_t)threads, sizeof(pthread_t));
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int i = 0; i < threads; i++) pthread_create(&ids[i], 0, thread_main, (void *)(uintptr_t)i);
  for (int i = 0; i < threads; i++) pthread_join(ids[i], 0);
  clock_gettime(CLOCK_MONOTONIC, &end);
  double secs = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
  printf("FSYNCGEN writes=%llu fsyncs=%llu bytes=%llu failures=%llu secs=%.3f\n",
         (unsigned long long)writes_done, (unsigned long long)fsyncs_done,
         (unsigned long long)(writes_done * block_bytes), (unsigned long long)failures, secs);
  return failures ? 1 : 0;
}
