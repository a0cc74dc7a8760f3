/* The native byte relay of scripts/bench_floor.py: the floor of one extra process between a
 * client and its server, with no interpreter in it.
 *
 *     relay_floor COMMAND [ARG...]
 *
 * runs COMMAND and copies bytes stdin -> its stdin and its stdout -> stdout, parsing nothing.
 * Every descriptor is non-blocking and each direction has a buffer of its own (4 MiB): a
 * relay that blocked writing one way while its peer blocked writing the other would deadlock
 * under a pipelined burst. It exits with the child once the child's output is all written.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAP (4 << 20)

typedef struct {
    char *buf;
    size_t start, end; /* the bytes read and not yet written: buf[start:end] */
    int src, dst;
    int eof; /* src said end of file (or failed) */
} Direction;

static void non_blocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: relay_floor COMMAND [ARG...]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* a reader gone is a failed write, not the relay's death */
    int to_child[2], from_child[2];
    if (pipe(to_child) || pipe(from_child)) {
        perror("relay_floor: pipe");
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("relay_floor: fork");
        return 1;
    }
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[0]), close(to_child[1]), close(from_child[0]), close(from_child[1]);
        execvp(argv[1], argv + 1);
        perror("relay_floor: exec");
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    Direction dirs[2] = {
        {malloc(CAP), 0, 0, 0, to_child[1], 0},   /* client -> server */
        {malloc(CAP), 0, 0, from_child[0], 1, 0}, /* server -> client */
    };
    if (!dirs[0].buf || !dirs[1].buf) return 1;
    non_blocking(0), non_blocking(1), non_blocking(to_child[1]), non_blocking(from_child[0]);
    int up_closed = 0;
    for (;;) {
        struct pollfd fds[4];
        int which[4], writing[4], n = 0;
        for (int i = 0; i < 2; i++) {
            Direction *d = &dirs[i];
            if (!d->eof && d->end < CAP) {
                fds[n] = (struct pollfd){d->src, POLLIN, 0};
                which[n] = i, writing[n++] = 0;
            }
            if (d->end > d->start) {
                fds[n] = (struct pollfd){d->dst, POLLOUT, 0};
                which[n] = i, writing[n++] = 1;
            }
        }
        if (dirs[1].eof && dirs[1].end == dirs[1].start) break; /* the server is done */
        if (!up_closed && dirs[0].eof && dirs[0].end == dirs[0].start) {
            close(dirs[0].dst); /* the client's end of file, passed on */
            up_closed = 1;
        }
        if (n == 0) break;
        if (poll(fds, n, -1) < 0) {
            if (errno == EINTR) continue;
            perror("relay_floor: poll");
            break;
        }
        for (int k = 0; k < n; k++) {
            Direction *d = &dirs[which[k]];
            if (!fds[k].revents) continue;
            if (!writing[k]) {
                ssize_t got = read(d->src, d->buf + d->end, CAP - d->end);
                if (got > 0)
                    d->end += (size_t)got;
                else if (got == 0 || (errno != EAGAIN && errno != EINTR))
                    d->eof = 1;
            } else {
                ssize_t put = write(d->dst, d->buf + d->start, d->end - d->start);
                if (put > 0) {
                    d->start += (size_t)put;
                    if (d->start == d->end) d->start = d->end = 0;
                } else if (errno != EAGAIN && errno != EINTR) {
                    d->eof = 1; /* nobody reads this way any more: drop what is left */
                    d->start = d->end = 0;
                }
            }
        }
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
