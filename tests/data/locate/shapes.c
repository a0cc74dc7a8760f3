/* shapes.c — geometry helpers, indented with tabs.
 * Test data for lspmux's Locate engine. */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHAPES 64
#define SQUARE(x) ((x) * (x))

typedef struct {
	double x;
	double y;
} point_t;

typedef enum { SHAPE_CIRCLE, SHAPE_RECT, SHAPE_POLYGON } shape_kind;

typedef struct shape {
	shape_kind kind;
	char name[32];
	union {
		struct {
			point_t center;
			double radius;
		} circle;
		struct {
			point_t min;
			point_t max;
		} rect;
		struct {
			point_t *points;
			size_t count;
		} polygon;
	} u;
} shape_t;

static double distance(point_t a, point_t b)
{
	return sqrt(SQUARE(a.x - b.x) + SQUARE(a.y - b.y));
}

static double polygon_area(const point_t *points, size_t count)
{
	double sum = 0.0;
	for (size_t i = 0; i < count; i++) {
		const point_t *p = &points[i];
		const point_t *q = &points[(i + 1) % count];
		sum += p->x * q->y - q->x * p->y;
	}
	return fabs(sum) / 2.0;
}

double shape_area(const shape_t *s)
{
	switch (s->kind) {
	case SHAPE_CIRCLE:
		return M_PI * SQUARE(s->u.circle.radius);
	case SHAPE_RECT:
		return (s->u.rect.max.x - s->u.rect.min.x) * (s->u.rect.max.y - s->u.rect.min.y);
	case SHAPE_POLYGON:
		return polygon_area(s->u.polygon.points, s->u.polygon.count);
	}
	return 0.0;
}

double shape_perimeter(const shape_t *s)
{
	double total = 0.0;
	switch (s->kind) {
	case SHAPE_CIRCLE:
		return 2.0 * M_PI * s->u.circle.radius;
	case SHAPE_RECT:
		return 2.0 * ((s->u.rect.max.x - s->u.rect.min.x) + (s->u.rect.max.y - s->u.rect.min.y));
	case SHAPE_POLYGON:
		for (size_t i = 0; i < s->u.polygon.count; i++) {
			size_t j = (i + 1) % s->u.polygon.count;
			total += distance(s->u.polygon.points[i], s->u.polygon.points[j]);
		}
		return total;
	}
	return total;
}

shape_t *shape_circle(const char *name, point_t center, double radius)
{
	shape_t *s = calloc(1, sizeof *s);
	if (s == NULL)
		return NULL;
	s->kind = SHAPE_CIRCLE;
	strncpy(s->name, name, sizeof s->name - 1);
	s->u.circle.center = center;
	s->u.circle.radius = radius;
	return s;
}

shape_t *shape_rect(const char *name, point_t min, point_t max)
{
	shape_t *s = calloc(1, sizeof *s);
	if (s == NULL)
		return NULL;
	s->kind = SHAPE_RECT;
	strncpy(s->name, name, sizeof s->name - 1);
	s->u.rect.min = min;
	s->u.rect.max = max;
	return s;
}

void shape_free(shape_t *s)
{
	if (s != NULL && s->kind == SHAPE_POLYGON)
		free(s->u.polygon.points);
	free(s);
}

int main(int argc, char **argv)
{
	shape_t *shapes[MAX_SHAPES];
	size_t n = 0;
	(void)argc;
	(void)argv;

	shapes[n++] = shape_circle("unit", (point_t){0.0, 0.0}, 1.0);
	shapes[n++] = shape_rect("box", (point_t){0.0, 0.0}, (point_t){2.0, 3.0});
	for (size_t i = 0; i < n; i++) {
		if (shapes[i] == NULL)
			continue;
		printf("%-8s area=%8.3f perimeter=%8.3f\n", shapes[i]->name,
		       shape_area(shapes[i]), shape_perimeter(shapes[i]));
		shape_free(shapes[i]);
	}
	return 0;
}
