/* walk.c - enumeration of the paths to analyse with fts(3) (physical walk, optional -xdev),
 * hard links and repeated paths returned once through a (dev, ino) set. */
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gen/inodeset.h"
#include "gen/walk.h"

struct walk {
	FTS *fts;
	char **paths;       /* copies, for fts_open */
	uint64_t known_total;
	bool all_known;
	bool root_files;    /* a file was given as a PATH: every file is then checked against it */
	struct inode_set seen;
	int npaths;
	uint64_t start, len;  /* walk_set_range: the part of the one file or device to read */
};

/* A device's key in an inode set: its number, apart from every file's (dev, ino). */
static struct inode_key device_key(dev_t rdev)
{
	return (struct inode_key){0, (uint64_t)rdev | (1ULL << 63)};
}

static uint64_t device_size(const char *path)
{
	uint64_t size = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (ioctl(fd, BLKGETSIZE64, &size))
		size = 0;
	close(fd);
	return size;
}

static int by_name(const FTSENT **a, const FTSENT **b)
{
	return strcmp((*a)->fts_name, (*b)->fts_name);
}

struct walk *walk_open(char *const *paths, int npaths, bool one_file_system, struct dd_err *err)
{
	struct walk *w = calloc(1, sizeof *w);
	if (!w || !(w->paths = calloc((size_t)npaths + 1, sizeof *w->paths))) {
		err_fail(err, -1, "out of memory");
		free(w);
		return NULL;
	}
	w->all_known = true;
	w->npaths = npaths;
	/* the files and devices counted in known_total: one given twice (or by a second name) is
	 * read once, and counted twice it halved the automatic compressibility sample rate */
	struct inode_set counted = {0};
	for (int i = 0; i < npaths; i++) {
		struct stat st;
		const char *p = paths[i];
		if (!*p) {
			err_fail(err, -1, "an empty path");
			goto fail;
		}
		if (stat(p, &st)) {
			err_fail(err, -1, "%s: %s", p, strerror(errno));
			goto fail;
		}
		if (S_ISDIR(st.st_mode)) {
			if (access(p, R_OK | X_OK)) {
				err_fail(err, -1, "%s: cannot read the directory: %s", p, strerror(errno));
				goto fail;
			}
			w->all_known = false;
		} else if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
			int fd = open(p, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				err_fail(err, -1, "%s: cannot open: %s", p, strerror(errno));
				goto fail;
			}
			close(fd);
			struct inode_key id = S_ISREG(st.st_mode) ? (struct inode_key){st.st_dev, st.st_ino}
								  : device_key(st.st_rdev);
			int r = inode_set_insert(&counted, id.dev, id.ino);
			if (r < 0) {
				err_fail(err, -1, "out of memory");
				goto fail;
			}
			if (!r)
				w->known_total += S_ISREG(st.st_mode) ? (uint64_t)st.st_size : device_size(p);
		} else {
			err_fail(err, -1, "%s: not a directory, regular file or block device", p);
			goto fail;
		}
		if (!(w->paths[i] = strdup(p))) {
			err_fail(err, -1, "out of memory");
			goto fail;
		}
	}
	int opts = FTS_PHYSICAL | FTS_COMFOLLOW | FTS_NOCHDIR | (one_file_system ? FTS_XDEV : 0);
	if (!(w->fts = fts_open(w->paths, opts, by_name))) {
		err_fail(err, -1, "cannot walk the paths: %s", strerror(errno));
		goto fail;
	}
	inode_set_free(&counted);
	return w;
fail:
	inode_set_free(&counted);
	walk_close(w);
	return NULL;
}

int walk_next(struct walk *w, struct walk_entry *e)
{
	FTSENT *f;
	errno = 0;
	while ((f = fts_read(w->fts)) != NULL) {
		const struct stat *st = f->fts_statp;
		switch (f->fts_info) {
		case FTS_DNR:
		case FTS_ERR:
		case FTS_NS:
			*e = (struct walk_entry){WALK_ERROR, f->fts_path, 0, f->fts_errno, 0, 0, 0, 0};
			return 1;
		case FTS_F: {
			/* Only inodes that can be met twice are remembered (memory: ~30 B each): hard
			 * links, and every file once a file was also given on its own as a PATH. */
			int r = 0;
			if (f->fts_level == FTS_ROOTLEVEL)
				w->root_files = true;
			if (st->st_nlink > 1 || w->root_files)
				r = inode_set_insert(&w->seen, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
			if (r < 0)
				return -1;
			if (r)
				continue; /* another link to (or another path of) a file already read */
			*e = (struct walk_entry){WALK_FILE, f->fts_path, (uint64_t)st->st_size, 0, w->start, w->len, 0, 0};
			if (st->st_nlink > 1) {
				e->dev = (uint64_t)st->st_dev;
				e->ino = (uint64_t)st->st_ino;
			}
			return 1;
		}
		case FTS_DEFAULT:
			if (f->fts_level == FTS_ROOTLEVEL && S_ISBLK(st->st_mode)) {
				struct inode_key k = device_key(st->st_rdev);
				int r = inode_set_insert(&w->seen, k.dev, k.ino);
				if (r < 0)
					return -1;
				if (r)
					continue;
				*e = (struct walk_entry){WALK_DEVICE, f->fts_path, device_size(f->fts_path), 0, w->start, w->len,
							 0, 0};
				return 1;
			}
			continue; /* devices, FIFOs, sockets inside a tree hold no file data */
		default:
			continue; /* directories (pre/post order), symlinks, cycles */
		}
	}
	return errno ? -1 : 0;
}

uint64_t walk_known_total(const struct walk *w, bool *complete)
{
	*complete = w->all_known;
	return w->known_total;
}

int walk_set_range(struct walk *w, uint64_t start, uint64_t len)
{
	if (w->npaths != 1 || !w->all_known)
		return -1;
	w->start = start;
	w->len = len;
	uint64_t rest = w->known_total > start ? w->known_total - start : 0;
	w->known_total = len && len < rest ? len : rest;
	return 0;
}

int walk_skip_inode(struct walk *w, uint64_t dev, uint64_t ino)
{
	return inode_set_insert(&w->seen, dev, ino) < 0 ? -1 : 0;
}

void walk_close(struct walk *w)
{
	if (!w)
		return;
	if (w->fts)
		fts_close(w->fts);
	for (char **p = w->paths; p && *p; p++)
		free(*p);
	free(w->paths);
	inode_set_free(&w->seen);
	free(w);
}
