# columns.awk: checks a table as a view prints it (a screen captured by tmux, or --batch
# --width): its columns do not run together and its function names are not cut inside a
# package path. Prints one line per fault and exits 1 when there is any.
#
#   awk -v title=REGEX -v right="SHARE%|SAMPLES" -v names="WHERE|HOT FUNCTION" \
#       [-v known=FILE] [-v full=1] -f columns.awk TEXT
#
# title: the title line (column names, two spaces or more apart); the rows follow it up
# to a blank line or a screen's status line. right: the names of the right-aligned columns (numbers). names: the
# columns that hold function names, shown short (by pprof's rules): none may hold a '/'
# (a package path left, or cut), and one cut from the left ("~" for the ellipsis: map it
# before) must start where a part of a known name starts, never inside its package: known
# is a file of function names (full, one a line) that may be shown. With full=1 the names
# are full (the x key): a cut must start after a '/' or a '.' of the known name, or at
# its '('. Rows naming what has
# no goroutine or label ("(no goroutine)", a sentence across the columns) are left out.

function short(n,   q, r, pre, i, last)
{
	# pprof: a major version element goes, then the package path up to its last '/'.
	gsub(/\/v[0-9]+\./, ".", n)
	gsub(/\/v[0-9]+\//, "/", n)
	q = index(n, "(")
	r = index(n, "[")
	if (r && (!q || r < q))
		q = r
	pre = q ? substr(n, 1, q - 1) : n
	last = 0
	for (i = 1; i <= length(pre); i++)
		if (substr(pre, i, 1) == "/")
			last = i
	return substr(n, last + 1)
}

function fault(msg)
{
	print msg
	bad = 1
}

BEGIN {
	nr = split(right, rl, "|")
	for (i = 1; i <= nr; i++)
		isright[rl[i]] = 1
	nn = split(names, nl, "|")
	for (i = 1; i <= nn; i++)
		isname[nl[i]] = 1
	if (known != "")
		while ((getline k < known) > 0) {
			s = full ? k : short(k)
			nknown++
			kshort[nknown] = s
			# where its name starts: after the package, at the first '.'
			kpkg[nknown] = index(s, ".")
		}
}

!intitle && $0 ~ title {
	intitle = 1
	line = $0
	n = 0
	pos = 1
	# the column names: runs of text separated by two spaces or more
	while (pos <= length(line)) {
		rest = substr(line, pos)
		if (!match(rest, /[^ ]+( [^ ]+)*/))
			break
		h = substr(rest, RSTART, RLENGTH)
		# --batch says what the view counts after the names: not a column
		if (h ~ /[0-9;,]/)
			break
		n++
		start[n] = pos + RSTART - 1
		stop[n] = start[n] + RLENGTH - 1
		head[n] = h
		pos = stop[n] + 1
	}
	ncols = n
	next
}

# the end of the rows: a blank line, or the screen's status line (ROW/ROWS) and key bar
intitle && (/^ *$/ || / [0-9]+\/[0-9]+ *$/ || /^q Quit /) { exit }

intitle && /\(no [a-z_]+\)/ { next }

intitle {
	rows++
	row = $0
	for (j = 1; j <= ncols; j++) {
		h = head[j]
		if (isright[h]) {
			# a number ends where its name ends, a space after it
			c = substr(row, stop[j], 1)
			after = substr(row, stop[j] + 1, 1)
			if (c == " " || c == "" || (after != " " && after != ""))
				fault("row " rows ", " h ": the number does not end at column " stop[j] ": " row)
			continue
		}
		if (j > 1 && substr(row, start[j] - 1, 1) != " ")
			fault("row " rows ", " h ": no space before column " start[j] ": " row)
		cell = j < ncols ? substr(row, start[j], start[j + 1] - start[j]) : substr(row, start[j])
		if (substr(cell, 1, 1) == " " && cell !~ /^ *$/ && !isname[h])
			fault("row " rows ", " h ": the cell does not start at column " start[j] ": " row)
		if (!isname[h])
			continue
		sub(/ +$/, "", cell)
		sub(/^[+-] /, "", cell)
		sub(/^ +[+-] /, "", cell)
		if (substr(cell, 1, 1) == " " && cell != "")
			fault("row " rows ", " h ": the cell does not start at column " start[j] ": " row)
		if (!full && index(cell, "/"))
			fault("row " rows ", " h ": a package path in a name: " cell)
		if (substr(cell, 1, 1) != "~")
			continue
		# Cut from the left: where does the rest start in a known name?
		r = substr(cell, 2)
		found = 0
		inpkg = 0
		for (k = 1; k <= nknown; k++) {
			s = kshort[k]
			if (length(s) < length(r) || substr(s, length(s) - length(r) + 1) != r)
				continue
			found = 1
			at = length(s) - length(r) + 1
			before = substr(s, at - 1, 1)
			if (full ? (before != "/" && before != "." && substr(r, 1, 1) != "(") : at <= kpkg[k])
				inpkg = 1
			else
				break
		}
		if (found && inpkg && k > nknown)
			fault("row " rows ", " h ": cut inside the package path: " cell)
		# A name no list knows: a package is lower case, so a cut that leaves a lower-case
		# word before a '.' may be inside one.
		if (!found && !full && r !~ /^[(A-Z*]/ && r ~ /^[a-z0-9_]+\./)
			fault("row " rows ", " h ": cut inside what looks like a package: " cell)
	}
}

END {
	if (!intitle)
		fault("no line matches the title " title)
	else if (!rows)
		fault("no row under the title")
	exit bad
}
