/* ALOE_API marks the symbols libaloe exports; everything else is hidden. */
#ifndef ALOE_EXPORT_H
#define ALOE_EXPORT_H

#if defined(ALOE_STATIC_DEFINE)
#define ALOE_API
#else
#define ALOE_API __attribute__((visibility("default")))
#endif

#endif /* ALOE_EXPORT_H */
