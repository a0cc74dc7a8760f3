#include <stdlib.h>
#include <string.h>
#include "list.h"

struct node {
    struct node *next;
    int key;
    char name[32];
};

static struct list_opts default_opts = { .capacity = 16, .grow = 2, .shrink = 0 };

struct node *node_new(int key, const char *name)
{
    struct node *n = malloc(sizeof(*n));
    if (n == NULL)
        return NULL;
    n->next = NULL;
    n->key = key;
    strncpy(n->name, name, sizeof(n->name) - 1);
    return n;
}

void list_push(struct list *l, struct node *n)
{
    n->next = l->head;
    l->head = n;
    l->size++;
}

struct node *list_find(struct list *l, int key)
{
    struct node *p;
    for (p = l->head; p != NULL; p = p->next) {
        if (p->key == key)
            return p;
    }
    return NULL;
}

int list_remove(struct list *l, int key)
{
    struct node **pp = &l->head;
    while (*pp) {
        if ((*pp)->key == key) {
            struct node *dead = *pp;
            *pp = dead->next;
            free(dead);
            l->size--;
            return 1;
        }
        pp = &(*pp)->next;
    }
    return 0;
}

const char *list_status(int code)
{
    switch (code) {
    case 0:
        return "ok";
    case 1:
        return "empty";
    case 2:
        return "full";
    default:
        return "unknown";
    }
}

void list_dump(const struct list *l, FILE *out)
{
    const struct node *p;
    fprintf(out, "list of %d\n", l->size);
    for (p = l->head; p; p = p->next)
        fprintf(out, "  %d: %s\n", p->key, p->name);
}
